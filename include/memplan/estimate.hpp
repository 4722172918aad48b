#pragma once
// The estimate: parameters, gradients, optimizer state and activations (or the KV cache for
// inference), plus the per-process overhead, each with its format and the arithmetic behind it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <memplan/lora.hpp>
#include <memplan/request.hpp>
#include <memplan/sharding.hpp>

namespace memplan {

// One term of the breakdown.
struct Term {
  std::string key;    // "parameters", "gradients", "optimizer_state", "activations", "kv_cache", "overhead"
  std::string label;  // "Parameters"
  uint64_t bytes = 0;
  std::string format;                   // "fp32", "bf16 + fp32 master", "—"
  std::string detail;                   // "2 copies x fp32", "batch 8 x 1,234 B/row"
  std::vector<std::string> arithmetic;  // lines a reviewer can check by hand
};

// A saved tensor of the activation ledger (for --explain).
struct LedgerRow {
  std::string name;
  std::string shape;
  std::string format;
  uint64_t bytes = 0;
};

struct Estimate {
  EstimateRequest request;
  uint64_t trainable_parameters = 0;
  std::optional<LoraAdapters> lora;      // set when request.lora: the adapters trained
  std::vector<Term> terms;               // in order; overhead last
  std::vector<std::string> assumptions;  // what the numbers rest on
  std::vector<LedgerRow> layer_ledger;   // activations of one layer, when an architecture is known
  std::string ledger_title;
  std::optional<ShardingResult> sharded;  // set when request.parallel: per-rank loads, host memory

  uint64_t bytes(const std::string& key) const;
  uint64_t total_bytes() const;     // every term but the overhead
  uint64_t required_bytes() const;  // total + overhead
};

// Computes the estimate; throws Error on inputs that cannot be combined, OverflowError on overflow.
Estimate estimate(const EstimateRequest& request);

}  // namespace memplan
