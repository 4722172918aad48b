#pragma once
// The estimate: parameters, gradients, optimizer state and activations (or the KV cache for
// inference), plus the per-process overhead, each with its format and the arithmetic behind it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <memplan/lora.hpp>
#include <memplan/model.hpp>
#include <memplan/optimizer.hpp>
#include <memplan/recipe.hpp>
#include <memplan/sharding.hpp>

namespace memplan {

enum class Mode { train, infer };

inline constexpr uint64_t k_default_overhead_bytes = 512ull << 20;  // CUDA context + workspaces

// What to compute (the CLI's flags, resolved).
struct EstimateRequest {
  ModelSpec model;
  Recipe recipe;
  Optimizer optimizer;
  Mode mode = Mode::train;
  double trainable = 1.0;          // share of parameters trained (LoRA: ~0.002)
  std::string quantize;            // frozen-weight format ("nf4", "int8", ...); "" = none
  uint64_t batch = 1;              // micro-batch
  uint64_t seq = 0;                // sequence length (0 = not given)
  uint64_t activation_bytes_per_row = 0;  // --activation-bytes-per-row (0 = not given)
  std::string attention = "sdpa";         // eager | sdpa (fused, PyTorch 2 default)
  std::string checkpointing = "none";     // none | selective | full
  std::string kv_format;                  // KV-cache format for inference ("" = activation format)
  uint64_t overhead_bytes = k_default_overhead_bytes;
  bool stored_weights = false;     // inference: weights cost model.weight_bytes, as stored in the file
  std::optional<ParallelLayout> parallel;  // several GPUs: report the most-loaded one
  GradFormat grad_format = GradFormat::half;  // gradient buffers of mixed recipes (16/18/20 B per parameter)
  uint64_t largest_layer = 0;      // --largest-layer: ZeRO-3/FSDP gathered unit (0 = derive)
  // --lora R: adapters on these matrices are the trainable parameters (already counted in
  // model.parameters; trainable = their share); every base weight is frozen.
  std::optional<LoraTargets> lora;
};

// One term of the breakdown.
struct Term {
  std::string key;     // "parameters", "gradients", "optimizer_state", "activations", "kv_cache", "overhead"
  std::string label;   // "Parameters"
  uint64_t bytes = 0;
  std::string format;  // "fp32", "bf16 + fp32 master", "—"
  std::string detail;  // "2 copies x fp32", "batch 8 x 1,234 B/row"
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
  std::optional<LoraAdapters> lora;        // set when request.lora: the adapters trained
  std::vector<Term> terms;                 // in order; overhead last
  std::vector<std::string> assumptions;    // what the numbers rest on
  std::vector<LedgerRow> layer_ledger;     // activations of one layer, when an architecture is known
  std::string ledger_title;
  std::optional<ShardingResult> sharded;   // set when request.parallel: per-rank loads, host memory

  uint64_t bytes(const std::string& key) const;
  uint64_t total_bytes() const;     // every term but the overhead
  uint64_t required_bytes() const;  // total + overhead
};

// Computes the estimate; throws Error on inputs that cannot be combined, OverflowError on overflow.
Estimate estimate(const EstimateRequest& request);

}  // namespace memplan
