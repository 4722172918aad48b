// Per-GPU and per-host memory of a parallel layout: the model-parallel slice each rank holds
// (Megatron split when tp/pp > 1), its model states sharded over the data-parallel group
// (ZeRO / FSDP / distributed optimizer), offload to host, gathered buffers and activations.
#include <fmt/format.h>

#include <memplan/sharding.hpp>

#include <algorithm>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"
#include "core/parallel/megatron.hpp"

namespace memplan {

namespace {

std::string g(uint64_t v) { return group_thousands(v); }

std::string cost(ElementCost c) {
  if (c.den == 1) return std::to_string(c.num);
  return fmt::format("{:.4g}", c.bytes());
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b ? 1 : 0); }

// One model-parallel slice: what a kind of rank holds before data-parallel sharding.
struct Slice {
  std::string kind;
  uint64_t stage = 0;  // pipeline stage index
  uint64_t count = 0;
  uint64_t params = 0;
  uint64_t activations = 0;
};

struct Terms {
  RankLoad load;
  uint64_t weight_elems = 0, grad_elems = 0, state_elems = 0, trainable = 0;
  uint64_t gathered = 0, unsharded_copy = 0;
  uint64_t stage = 0;
};

Terms rank_terms(const ShardingRequest& r, const ParallelLayout& l, uint64_t group, const Slice& s) {
  const ModelStateBytes& b = r.bytes;
  const int level = sharding_level(l.sharding);
  const bool fsdp = is_fsdp(l.sharding);
  Terms t;
  t.trainable = checked_mul_ratio(s.params, r.trainable, r.parameters, "trainable parameters");
  // FSDP stores parameters sharded from SHARD_GRAD_OP up; DeepSpeed only at stage 3.
  const bool shard_weights = level >= 3 || (fsdp && level >= 2);
  t.weight_elems = shard_weights ? ceil_div(s.params, group) : s.params;
  t.grad_elems = level >= 2 ? ceil_div(t.trainable, group) : t.trainable;
  t.state_elems = level >= 1 ? ceil_div(t.trainable, group) : t.trainable;

  GpuBreakdown& gpu = t.load.gpu;
  uint64_t weights = bytes_for(t.weight_elems, b.weight, "parameter bytes");
  uint64_t grads = bytes_for(t.grad_elems, b.gradient, "gradient bytes");
  uint64_t grad_copy = bytes_for(t.state_elems, b.master_gradient, "gradient bytes");
  uint64_t master = bytes_for(t.state_elems, b.master_weight, "master weight bytes");
  uint64_t extra = checked_mul_ratio(r.optimizer_extra_bytes, s.params, r.parameters, "optimizer bytes");
  if (level >= 1) extra = ceil_div(extra, group);
  uint64_t state = checked_add(bytes_for(t.state_elems, b.optimizer_state, "optimizer bytes"), extra);

  // Gathered working buffers.
  const uint64_t layer = std::min(ceil_div(r.largest_layer_parameters, l.tp), s.params);
  const uint64_t per_gathered = checked_add(bytes_for(layer, b.gathered), bytes_for(layer, b.gathered));
  if (level >= 3) {
    // ZeRO-3 / FULL_SHARD: the computing layer's parameters and gradients unsharded, plus prefetch.
    t.gathered = checked_mul(per_gathered, 1 + l.prefetch_layers, "gathered buffers");
  } else if (fsdp && level == 2) {
    // SHARD_GRAD_OP: all parameters stay unsharded from forward to backward; one unit's gradient.
    t.unsharded_copy = bytes_for(s.params, b.gathered, "unsharded parameters");
    t.gathered = bytes_for(layer, b.gathered);
  } else if (fsdp && !(b.gathered == b.weight)) {
    // NO_SHARD with mixed precision: a low-precision copy of every parameter for compute.
    t.unsharded_copy = bytes_for(s.params, b.gathered, "unsharded parameters");
  }

  // Offload to host.
  uint64_t host = 0, pinned = 0;
  if (l.offload != Offload::none) {
    host = checked_add(checked_add(master, state), grad_copy);
    pinned = grad_copy;
    master = state = grad_copy = 0;
    if (level >= 2 || l.offload == Offload::parameters) {
      host = checked_add(host, grads);
      pinned = checked_add(pinned, grads);
      grads = 0;
    }
    if (l.offload == Offload::parameters) {
      host = checked_add(host, weights);
      pinned = checked_add(pinned, weights);
      weights = 0;
    }
  }

  t.stage = s.stage;
  t.load.kind = s.kind;
  t.load.count = s.count;
  t.load.model_parameters = s.params;
  t.load.host_bytes = host;
  t.load.host_pinned_bytes = pinned;
  gpu.parameters = weights;
  gpu.gradients = checked_add(grads, grad_copy);
  gpu.optimizer_state = checked_add(master, state);
  gpu.activations = s.activations;
  gpu.buffers = checked_add(t.gathered, t.unsharded_copy);
  gpu.total = checked_add(checked_add(checked_add(gpu.parameters, gpu.gradients), gpu.optimizer_state),
                          checked_add(gpu.activations, gpu.buffers), "GPU bytes");
  return t;
}

std::vector<Slice> slices(const ShardingRequest& r, const ParallelLayout& l,
                          std::vector<std::string>& explain) {
  std::vector<Slice> out;
  const uint64_t per_stage = l.tp * l.dp;
  if (l.tp == 1 && l.pp == 1) {
    out.push_back({"all ranks", 0, l.gpus, r.parameters, r.activation_bytes});
    return out;
  }
  const TransformerArch& a = *r.arch;
  const std::vector<uint64_t> params = megatron_stage_parameters(a, r.step, l.tp, l.pp);
  uint64_t total = 0;
  for (uint64_t p : params) total = checked_add(total, p);
  explain.push_back("Megatron split: " + g(a.layers / l.pp) + " layers per stage; vocabulary padded to " +
                    g(megatron_padded_vocab(a.vocab, r.step.vocab_multiple, l.tp)) + " (multiple of " +
                    g(r.step.vocab_multiple) + " x tp); embedding on the first stage, " +
                    "output layer on the last; per tp rank " + g(total) + " parameters over all stages");
  auto stage = [&](uint64_t k, std::string kind, uint64_t count) {
    return Slice{std::move(kind), k, count, params[k], megatron_stage_activation_bytes(a, r.step, l, k)};
  };
  if (l.pp == 1) {
    out.push_back(stage(0, "all ranks", l.gpus));
    return out;
  }
  out.push_back(stage(0, "pipeline stage 0 (first)", per_stage));
  if (l.pp > 2) {
    // Middle stages hold the same parameters; stage 1 has the most micro-batches in flight.
    out.push_back(stage(1,
                        "pipeline stage 1 (heaviest of the middle stages 1-" + std::to_string(l.pp - 2) + ")",
                        per_stage * (l.pp - 2)));
  }
  out.push_back(stage(l.pp - 1, "pipeline stage " + std::to_string(l.pp - 1) + " (last)", per_stage));
  return out;
}

void explain_bytes(const ShardingRequest& r, const ParallelLayout& l, uint64_t group,
                   std::vector<std::string>& ex) {
  const ModelStateBytes& b = r.bytes;
  const int level = sharding_level(l.sharding);
  ex.push_back("bytes per parameter: weights " + cost(b.weight) + " + gradients " + cost(b.gradient) +
               (b.master_gradient.num ? " + fp32 gradient copy " + cost(b.master_gradient) : std::string()) +
               " + master weights " + cost(b.master_weight) + " + optimizer state " +
               cost(b.optimizer_state));
  const bool paper = b.weight == ElementCost{2, 1} && b.gradient == ElementCost{2, 1} &&
                     b.master_gradient.num == 0 && b.master_weight == ElementCost{4, 1} &&
                     b.optimizer_state == ElementCost{8, 1};
  static const char* zero_formula[] = {"(2+2+K)Psi", "4Psi + K Psi/Nd", "2Psi + (2+K)Psi/Nd",
                                       "(2+2+K)Psi/Nd"};
  if (paper && !is_fsdp(l.sharding))
    ex.push_back(std::string("ZeRO paper (Rajbhandari et al., SC'20, Sec. 5.1), K = 12: stage ") +
                 std::to_string(level) + " = " + zero_formula[level] + " with Nd = " + g(group));
  if (l.sharding == ShardingStrategy::zero1) {
    const char* row = nullptr;
    if (b.weight == ElementCost{2, 1} && b.gradient == ElementCost{2, 1} &&
        b.master_gradient == ElementCost{4, 1})
      row = "float16 param, float16 grads: 4 + 16/d";
    else if (b.weight == ElementCost{2, 1} && b.gradient == ElementCost{4, 1} && b.master_gradient.num == 0)
      row = "bf16/float16 param, fp32 grads: 6 + 12/d";
    else if (b.weight == ElementCost{4, 1} && b.gradient == ElementCost{4, 1} && b.master_weight.num == 0)
      row = "fp32 param, fp32 grads: 8 + 8/d";
    if (row && b.optimizer_state == ElementCost{8, 1})
      ex.push_back(
          std::string("Megatron-LM distributed optimizer (docs/source/distrib_optimizer.md, Megatron "
                      "Core developer guide): ") +
          row + " bytes per parameter, d = " + g(group));
  }
  // Where this split is the one DeepSpeed's own estimator assumes, say so.
  const bool half_w = b.weight == ElementCost{2, 1} && b.master_weight == ElementCost{4, 1} &&
                      b.optimizer_state == ElementCost{8, 1};
  const bool fp32_grads = b.gradient == ElementCost{4, 1} && b.master_gradient.num == 0;
  const bool half_and_copy = b.gradient == ElementCost{2, 1} && b.master_gradient == ElementCost{4, 1};
  if (half_w && l.sharding == ShardingStrategy::zero3 && fp32_grads)
    ex.push_back(
        "same split as DeepSpeed estimate_zero3_model_states_mem_needs (stage3.py, PR #965 to "
        "current): 4L + 18P/N, + prefetched layers");
  if (half_w && l.sharding == ShardingStrategy::zero2 && half_and_copy)
    ex.push_back(
        "same split as DeepSpeed estimate_zero2_model_states_mem_needs, current formula "
        "(stage_1_and_2.py since PR #5099, April 2024): 2P + 18P/N");
  if (half_w && l.sharding == ShardingStrategy::zero1 && half_and_copy)
    ex.push_back("same split as DeepSpeed's documented ZeRO-2 estimate (memory.rst, PR #965): 4P + 16P/N");
}

}  // namespace

ShardingResult estimate_sharded(const ShardingRequest& r) {
  if (r.parameters == 0) throw Error(Field::params, "must be at least 1");
  if (r.trainable > r.parameters) throw Error(Field::trainable, "more trainable parameters than parameters");
  ShardingResult out;
  const ParallelLayout l = validate_layout(r.layout, r.arch, r.step);
  out.layout = l;
  out.gpus_per_node = l.gpus / l.nodes;
  uint64_t group = l.dp;
  if (l.sharding == ShardingStrategy::fsdp_hybrid_shard)
    group = std::min(l.dp, std::max<uint64_t>(1, out.gpus_per_node / (l.tp * l.pp)));
  out.shard_group = group;

  std::vector<std::string>& ex = out.explain;
  ex.push_back("layout: " + g(l.gpus) + " GPUs = " + g(l.nodes) + " node(s) x " + g(out.gpus_per_node) +
               "; tp " + g(l.tp) + " x pp " + g(l.pp) + " x dp " + g(l.dp) + "; " +
               sharding_engine(l.sharding) +
               (sharding_level(l.sharding) ? " shards over " + g(group) + " ranks" : std::string()) +
               (l.offload != Offload::none ? "; offload " + offload_name(l.offload) : std::string()));
  explain_bytes(r, l, group, ex);

  const std::vector<Slice> kinds = slices(r, l, ex);
  size_t heaviest = 0;
  std::vector<Terms> terms;
  for (const Slice& s : kinds) {
    terms.push_back(rank_terms(r, l, group, s));
    out.ranks.push_back(terms.back().load);
    if (terms.back().load.gpu.total > terms[heaviest].load.gpu.total) heaviest = terms.size() - 1;
  }
  const Terms& t = terms[heaviest];
  out.most_loaded = t.load.kind;
  out.gpu = t.load.gpu;
  uint64_t host = 0, pinned = 0;
  for (const RankLoad& k : out.ranks) {
    host = std::max(host, k.host_bytes);
    pinned = std::max(pinned, k.host_pinned_bytes);
  }
  out.host_bytes_per_node = checked_mul(host, out.gpus_per_node, "host bytes");
  out.host_pinned_bytes_per_node = checked_mul(pinned, out.gpus_per_node, "host bytes");

  ex.push_back("most-loaded GPU: " + t.load.kind + ", " + g(t.load.model_parameters) +
               " parameters in its slice, " + g(t.trainable) + " trainable");
  ex.push_back("  parameters: " + g(t.weight_elems) + " x " + cost(r.bytes.weight) + " B" +
               (l.offload == Offload::parameters ? " (offloaded)" : "") + " = " + g(t.load.gpu.parameters) +
               " B");
  ex.push_back("  gradients: " + g(t.grad_elems) + " x " + cost(r.bytes.gradient) + " B" +
               (r.bytes.master_gradient.num
                    ? " + " + g(t.state_elems) + " x " + cost(r.bytes.master_gradient) + " B"
                    : std::string()) +
               " = " + g(t.load.gpu.gradients) + " B on the GPU" +
               (t.load.gpu.gradients == 0 && t.grad_elems ? " (offloaded)" : ""));
  ex.push_back("  optimizer state: " + g(t.state_elems) + " x (" + cost(r.bytes.master_weight) + " + " +
               cost(r.bytes.optimizer_state) + ") B = " + g(t.load.gpu.optimizer_state) + " B on the GPU" +
               (l.offload != Offload::none ? " (offloaded)" : ""));
  if (t.gathered)
    ex.push_back("  gathered buffers: " + g(t.gathered) + " B (largest layer " +
                 g(r.largest_layer_parameters) + " parameters and its gradient in " + cost(r.bytes.gathered) +
                 " B, x (1 + " + g(l.prefetch_layers) +
                 " prefetched); DeepSpeed docs: 4 x largest_layer_params)");
  if (t.unsharded_copy)
    ex.push_back("  unsharded low-precision parameters (FSDP): " + g(t.unsharded_copy) + " B");
  if (l.tp > 1 || l.pp > 1) {
    const LayerActivation la =
        korthikanti_layer_activation(*r.arch, r.step, l.tp, l.sequence_parallel, l.recompute);
    ex.push_back(
        "  activations (Korthikanti et al. 2022, Table 2; " +
        std::string(l.sequence_parallel ? "sequence parallel, " : "") + "recompute " +
        to_string(l.recompute) + "): per layer and micro-batch " + g(la.total) + " B (tp-replicated " +
        g(la.replicated) + ", split " + g(la.split) + ", s x s scores " + g(la.scores) + "); x " +
        g(r.arch->layers / (l.pp * l.virtual_stages)) + " layers per chunk x " +
        g(pipeline_in_flight(l.pp, t.stage, l.virtual_stages, l.micro_batches)) +
        " chunk micro-batches in flight (1F1B" +
        (l.virtual_stages > 1 ? ", interleaved: L(1 + (p-1)/(pv)) on stage 0" : "") +
        "), + embedding dropout mask (first stage) and output layer 4sbh/t (1 + v/h) (last stage) = " +
        g(t.load.gpu.activations) + " B");
  } else {
    ex.push_back("  activations: " + g(t.load.gpu.activations) +
                 " B per GPU (data parallel: unchanged by sharding)");
  }
  if (l.offload != Offload::none)
    ex.push_back("host per node: " + g(out.gpus_per_node) + " ranks x " + g(host) +
                 " B = " + g(out.host_bytes_per_node) + " B offloaded, of which pinned " +
                 g(out.host_pinned_bytes_per_node) +
                 " B (parameters and gradients in transfer; DeepSpeed docs: 6 B/param with offload_param, "
                 "4 B without)");
  return out;
}

}  // namespace memplan
