#pragma once
// The seam between the estimate and the activation models: what the forward pass keeps for
// backward (training) or the KV cache and working buffer (inference), for one request.

#include <optional>
#include <string>
#include <vector>

#include <memplan/estimate.hpp>
#include "core/memory/activations.hpp"

namespace memplan {

// Fills the activations and kv_cache terms of `e`, its ledger summary and notes. Builds no
// string: the ledger's rows are listed by activation_ledger_detail.
void add_activation_terms(const EstimateRequest& request, Estimate& e);

// The activation ledger's rows and modelling notes (training with a transformer or an MLP);
// empty otherwise. For --explain and JSON.
struct LedgerDetail {
  std::vector<LedgerRow> rows;
  std::vector<std::string> notes;
};
LedgerDetail activation_ledger_detail(const EstimateRequest& request);

// The training ledger itself, rows recorded (the tensor-level step replay, step_events.hpp);
// std::nullopt without one.
std::optional<ActivationLedger> training_activation_ledger(const EstimateRequest& request);

// Full checkpointing: what one layer rebuilt in backward adds (its saved tensors, and under
// autocast its half weight copies), counted in the activations term but alive only while that
// layer's backward runs. Zeros without full checkpointing or without a transformer ledger.
struct RecomputedLayer {
  uint64_t saved_bytes = 0;
  uint64_t weight_copy_bytes = 0;  // autocast: the layer's half weight copies
  // Autocast's cache holds the half copy of every weight that requires grad from its first cast
  // until the autocast region exits (aten/src/ATen/autocast_mode.cpp cached_cast, grad mode or
  // not): the checkpointed forward casts every layer's weights, so all of them are alive at the end
  // of the forward and through the loss computed inside the region (Hugging Face's Trainer), freed
  // before backward. Measured on CPU with torch 1.13 (bench/measure_step_peak.py).
  uint64_t cached_copy_bytes = 0;     // one layer's copies of the weights that require grad
  uint64_t autocast_cache_bytes = 0;  // every checkpointed layer's cached_copy_bytes
};
RecomputedLayer recomputed_layer(const EstimateRequest& request);

}  // namespace memplan
