#include <fmt/format.h>

#include "core/memory/activation_term.hpp"

#include <algorithm>

#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"
#include "core/memory/activations.hpp"
#include "core/memory/kv_cache.hpp"
#include "core/models/arch_layout.hpp"

namespace memplan {
namespace {

ActivationOptions options_for(const EstimateRequest& r, const TransformerArch* arch) {
  ActivationOptions o;
  o.batch = r.batch;
  o.seq = r.seq;
  o.attention = r.attention;
  o.checkpointing = r.checkpointing;
  o.act_cost = r.recipe.activations.cost;
  o.act_format = r.recipe.activations.name;
  o.autocast = r.recipe.autocast;
  // Hugging Face causal LMs upcast the logits to fp32 for the loss.
  o.fp32_logits = arch && arch->causal;
  o.dropout = arch && (arch->hidden_dropout > 0 || arch->attention_dropout > 0);
  if (arch && r.lora) o.lora = r.lora;
  return o;
}

void add_ledger(const ActivationLedger& l, ActivationTerms& a, const std::string& title) {
  for (const SavedTensor& t : l.per_layer)
    a.layer_ledger.push_back(
        {t.name + (t.role == Role::recomputed ? " (recomputed)" : ""), t.shape, t.format, t.bytes});
  for (const SavedTensor& t : l.outside_layers)
    a.layer_ledger.push_back(
        {"[outside layers] " + t.name + (t.role == Role::recomputed ? " (recomputed)" : ""), t.shape,
         t.format, t.bytes});
  a.ledger_title = title;
  a.assumptions.insert(a.assumptions.end(), l.notes.begin(), l.notes.end());
}

// BatchNorm after each hidden Linear keeps its input (the Linear's output) for backward; its
// per-feature mean and inverse std are batch independent and negligible.
void add_batchnorm(const std::vector<uint64_t>& widths, const EstimateRequest& r, ActivationLedger& l) {
  for (size_t i = 1; i + 1 < widths.size(); ++i) {
    const uint64_t per_sample = bytes_for(widths[i], r.recipe.activations.cost, "activation bytes");
    l.outside_layers.push_back(
        {"BatchNorm " + std::to_string(i) + " input (Linear " + std::to_string(i) + " output)",
         std::to_string(r.batch) + " x " + std::to_string(widths[i]), r.recipe.activations.name,
         checked_mul(per_sample, r.batch, "activation bytes"), Role::saved});
    l.bytes_per_sample = checked_add(l.bytes_per_sample, per_sample, "activation bytes");
  }
  l.saved_bytes_per_sample = l.bytes_per_sample;
  l.total_bytes = checked_mul(r.batch, l.bytes_per_sample, "activation bytes");
  l.notes.push_back("BatchNorm after every hidden Linear (--batchnorm): keeps its input for backward");
}

void training_activations(const EstimateRequest& r, ActivationTerms& a) {
  const ModelSpec& m = r.model;
  ActivationLedger l;
  if (!m.mlp_widths.empty()) {
    l = mlp_activations(m.mlp_widths, options_for(r, nullptr));
    if (m.has_batchnorm) add_batchnorm(m.mlp_widths, r, l);
    add_ledger(l, a, "Saved tensors of the MLP (batch " + group_thousands(r.batch) + ")");
  } else {
    TransformerArch arch = *m.arch;
    apply_layout_defaults(arch);
    l = transformer_activations(arch, options_for(r, &arch));
    add_ledger(l, a,
               "Saved tensors of one layer (batch " + group_thousands(r.batch) + " x seq " +
                   group_thousands(r.seq) + ", " + to_string(r.attention) + " attention, checkpointing " +
                   to_string(r.checkpointing) + ")");
  }
  a.activations.bytes = checked_add(l.total_bytes, l.fixed_bytes, "activation bytes");
  a.activations.format = r.recipe.activations.name;
  a.activations.detail =
      "batch " + group_thousands(r.batch) + " x " + group_thousands(l.bytes_per_sample) + " B/sample";
  if (l.layers)
    a.activations.arithmetic.push_back(
        "activations per sample = " + std::to_string(l.layers) +
        " layers (layer 0: " + group_thousands(l.first_layer_bytes / std::max<uint64_t>(r.batch, 1)) +
        " B, others " + group_thousands(l.layer_bytes / std::max<uint64_t>(r.batch, 1)) +
        " B) + outside the layers = " + group_thousands(l.bytes_per_sample) + " B");
  a.activations.arithmetic.push_back("activations = batch " + group_thousands(r.batch) + " x " +
                                     group_thousands(l.bytes_per_sample) +
                                     " B = " + group_thousands(l.total_bytes) + " B");
  if (l.fixed_bytes) {
    a.activations.arithmetic.push_back("+ autocast's half-precision weight copies kept for backward = " +
                                       group_thousands(l.fixed_bytes) + " B (independent of batch)");
    a.activations.detail += " + " + format_bytes(l.fixed_bytes, Units::gib) + " weight casts";
  }
  if (l.recompute_fraction > 0) {
    a.assumptions.push_back(fmt::format("checkpointing {}: about {:.0f}% more compute per step",
                                        to_string(r.checkpointing), 100.0 * l.recompute_fraction));
  }
}

void inference_activations(const EstimateRequest& r, ActivationTerms& a) {
  const ModelSpec& m = r.model;
  if (!m.mlp_widths.empty()) {
    const uint64_t widest = *std::max_element(m.mlp_widths.begin(), m.mlp_widths.end());
    const uint64_t per_row = bytes_for(2 * widest, r.recipe.activations.cost);
    a.activations.label = "Working buffer";
    a.activations.bytes = checked_mul(r.batch, per_row, "activation bytes");
    a.activations.format = r.recipe.activations.name;
    a.activations.detail = "input + output of the widest layer";
    a.activations.arithmetic.push_back("working buffer = batch " + group_thousands(r.batch) + " x 2 x " +
                                       group_thousands(widest) + " x " + r.recipe.activations.name + " = " +
                                       group_thousands(a.activations.bytes) + " B");
    return;
  }
  TransformerArch arch = *m.arch;
  apply_layout_defaults(arch);
  InferenceOptions o;
  o.batch = r.batch;
  o.seq = r.seq;
  const std::string kv = r.kv_format ? storage_format(*r.kv_format).name : r.recipe.activations.name;
  o.kv_format = kv;
  o.kv_cost = r.kv_format ? storage_format(*r.kv_format).cost : r.recipe.activations.cost;
  o.act_cost = r.recipe.activations.cost;
  o.act_format = r.recipe.activations.name;
  o.attention = r.attention;
  o.fp32_logits = arch.causal;
  const KvCache c = inference_memory(arch, o);
  a.kv_cache.bytes = c.bytes;
  a.kv_cache.format = kv;
  a.kv_cache.detail = "batch " + group_thousands(r.batch) + " x seq " + group_thousands(r.seq);
  a.kv_cache.arithmetic.push_back(c.explain);
  a.activations.label = "Working buffer";
  a.activations.bytes = c.working_buffer_bytes;
  a.activations.format = r.recipe.activations.name;
  a.activations.detail = c.working_buffer_name;
  a.activations.arithmetic.push_back("working buffer (" + c.working_buffer_name +
                                     ") = " + group_thousands(c.working_buffer_bytes) + " B");
}

}  // namespace

ActivationTerms activation_terms(const EstimateRequest& r) {
  ActivationTerms a;
  a.activations = {"activations", "Activations", 0, "-", "", {}};
  a.kv_cache = {"kv_cache", "KV cache", 0, "-", "", {}};
  if (r.activation_bytes_per_row) {
    a.activations.bytes = checked_mul(r.batch, r.activation_bytes_per_row, "activation bytes");
    a.activations.format = "as measured";
    a.activations.detail =
        "batch " + group_thousands(r.batch) + " x " + group_thousands(r.activation_bytes_per_row) + " B/row";
    a.activations.arithmetic.push_back(
        "activations = batch " + group_thousands(r.batch) + " x " +
        group_thousands(r.activation_bytes_per_row) +
        " B per row (--activation-bytes-per-row) = " + group_thousands(a.activations.bytes) + " B");
    if (r.mode == Mode::infer) a.activations.label = "Working activations";
    return a;
  }
  const bool transformer =
      r.model.arch && r.model.arch->layers && r.model.arch->hidden && r.model.arch->heads;
  if (transformer && r.seq && r.model.arch->max_positions && r.seq > r.model.arch->max_positions)
    a.assumptions.push_back("--seq " + group_thousands(r.seq) + " is longer than the model's context (" +
                            group_thousands(r.model.arch->max_positions) + " positions)");
  if (!r.model.mlp_widths.empty() || (transformer && r.seq)) {
    if (r.mode == Mode::train)
      training_activations(r, a);
    else
      inference_activations(r, a);
    return a;
  }
  a.activations.detail = "not counted";
  if (transformer)
    a.assumptions.push_back("activations not counted: give --seq (the model's context is " +
                            (r.model.arch->max_positions ? group_thousands(r.model.arch->max_positions)
                                                         : std::string("unknown")) +
                            ") to count them" +
                            std::string(r.mode == Mode::infer ? " and the KV cache" : ""));
  else
    a.assumptions.push_back(
        "activations not counted: give --activation-bytes-per-row, --mlp or an architecture with --seq");
  return a;
}

}  // namespace memplan
