#include "core/parallel/sharded_estimate.hpp"

#include <numeric>

#include "core/parallel/inference_split.hpp"

#include <algorithm>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"
#include "core/models/arch_layout.hpp"
#include "core/models/parameter_count.hpp"

namespace memplan {
namespace {

// Optimizer state per trainable parameter, without the master copy and the model's step counters: the
// state lines of the single-GPU term, as an exact fraction.
ElementCost state_cost(const Estimate& single) {
  const uint64_t trainable = std::max<uint64_t>(single.trainable_parameters, 1);
  const Term& t = single.term(TermKind::optimizer_state);
  uint64_t state = 0;
  for (uint8_t i = 0; i < t.line_count; ++i) {
    const Line& l = t.lines[i];
    const bool counted = (l.code == LineCode::product && l.what == Counted::optimizer_state) ||
                         l.code == LineCode::blockwise_state || l.code == LineCode::factored_state ||
                         l.code == LineCode::adapter_step_counters;  // LoRA's few tensors: spread as state
    if (counted) state = checked_add(state, l.bytes, "optimizer state bytes");
  }
  return {state, trainable};
}

// The per-tensor step counters of the whole model (not LoRA's adapter tensors).
uint64_t step_bytes(const Estimate& single) {
  const Term& t = single.term(TermKind::optimizer_state);
  for (uint8_t i = 0; i < t.line_count; ++i)
    if (t.lines[i].code == LineCode::step_counters) return t.lines[i].bytes;
  return 0;
}

}  // namespace

uint64_t largest_layer_parameters(const EstimateRequest& r) {
  if (r.largest_layer) return r.largest_layer;
  if (!r.model.arch || !r.model.arch->layers) return 0;
  return largest_layer_parameters(*r.model.arch);
}

ShardingRequest sharding_request_for(const EstimateRequest& r, const Estimate& single) {
  ShardingRequest s;
  s.parameters = r.model.parameters;
  s.trainable = single.trainable_parameters;
  const uint64_t steps = step_bytes(single);
  const ElementCost state = state_cost(single);
  if (r.recipe.has_master()) {
    s.bytes = r.parallel && is_fsdp(r.parallel->sharding)
                  ? fsdp_mixed_precision_state(r.recipe.weights.cost, state)
                  : mixed_precision_state(r.recipe.weights.cost, state, r.grad_format);
  } else {
    s.bytes = single_format_state(r.recipe.weights.cost, state);
    // The gradients as the single-GPU estimate prices them: peft's fp32 adapters on a half model keep
    // fp32 gradients, not the recipe's half ones (the same trainable parameters, the same bytes).
    if (const uint64_t n = single.trainable_parameters) {
      const uint64_t bytes = single.bytes(TermKind::gradients), g = std::gcd(bytes, n);
      s.bytes.gradient = g ? ElementCost{bytes / g, n / g} : r.recipe.gradients.cost;
    } else {
      s.bytes.gradient = r.recipe.gradients.cost;
    }
  }
  // The weights as the single-GPU estimate prices them (quantised frozen weights included), except
  // FSDP's mixed precision: its sharded FlatParameter keeps the fp32 dtype the model was built in
  // (torch/distributed/fsdp/_flat_param.py, torch 2.x: FlatParamHandle casts to param_dtype only
  // the shard it all-gathers, `_mp_shard`, and the unsharded `_full_param_padded`) and the optimizer
  // steps on it, so FULL_SHARD + AdamW holds 4 + 4 + 8 = 16 B per parameter / world size, not the
  // half weights' 2 + 4 + 8 = 14.
  const bool fsdp_master = r.recipe.has_master() && r.parallel && is_fsdp(r.parallel->sharding);
  if (!fsdp_master)
    s.bytes.weight = {single.bytes(TermKind::parameters), std::max<uint64_t>(r.model.parameters, 1)};
  s.optimizer_extra_bytes = steps;
  s.largest_layer_parameters = largest_layer_parameters(r);
  s.activation_bytes = single.bytes(TermKind::activations);
  if (r.model.arch) {
    TransformerArch a = *r.model.arch;
    apply_layout_defaults(a);
    s.arch = a;
    s.step.linear_biases = a.bias;
    s.step.position_rows = a.position_embedding == "learned" ? a.max_positions : 0;
    s.step.dropout = a.hidden_dropout > 0 || a.attention_dropout > 0;
  }
  s.step.seq = r.seq;
  s.step.micro_batch = r.batch;
  s.step.activation = r.recipe.activations.cost;
  s.step.attention = r.attention;
  if (r.parallel) {
    s.layout = *r.parallel;
    s.layout.recompute = r.checkpointing;
  }
  return s;
}

std::optional<EstimateRequest> smallest_layout(const EstimateRequest& r, uint64_t memory,
                                               uint64_t gpus_per_node, uint64_t max_gpus) {
  if (r.mode == Mode::infer) return smallest_inference_layout(r, memory);
  EstimateRequest base = r;
  if (!base.parallel) {
    base.parallel = ParallelLayout{};
    base.parallel->sharding = ShardingStrategy::zero3;  // the search tries every stage up to this one
  }
  EstimateRequest single_request = base;
  single_request.parallel.reset();
  single_request.replay_below = 0;  // only the terms are read: no allocator replay
  const Estimate single = estimate(single_request);
  LayoutSearch search;
  search.gpus_per_node = gpus_per_node;
  search.max_gpus = max_gpus;
  // Each layout is judged as its verdict will be: the estimate's required bytes (the step's peak
  // through the caching allocator where it is replayed, plus overhead), not the terms' sum.
  const LayoutSearchResult found =
      search_layout(sharding_request_for(base, single), search, [&](const ShardingResult& res) {
        EstimateRequest t = base;
        t.parallel = res.layout;
        t.replay_below = memory;
        return estimate(t).required_bytes() <= memory;
      });
  if (!found.found) return std::nullopt;
  EstimateRequest out = base;
  out.parallel = found.result.layout;
  return out;
}

}  // namespace memplan
