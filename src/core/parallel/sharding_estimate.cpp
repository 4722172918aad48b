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

// One model-parallel slice: what a kind of rank holds before data-parallel sharding.
struct Slice {
  RankKind kind = RankKind::all;
  uint64_t stage = 0;  // pipeline stage index
  uint64_t count = 0;
  uint64_t params = 0;
  uint64_t activations = 0;
};

struct Terms {
  RankLoad load;
  uint64_t weight_elems = 0, grad_elems = 0, state_elems = 0, trainable = 0;
  uint64_t gathered = 0, unsharded_copy = 0, buckets = 0;
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

  // torch DDP (torch/nn/parallel/distributed.py, torch 2.x: bucket_cap_mb=25,
  // gradient_as_bucket_view=False) builds its Reducer's buckets at construction: reducer.cpp
  // Reducer::initialize_buckets allocates each bucket's flat `gradients` tensor (at::empty over the
  // numel of its parameters, in their dtype) and mark_variable_ready_dense copies every gradient into
  // its bucket view; the docstring of gradient_as_bucket_view: "the saved memory size will be equal
  // to the total gradients size". So the buckets are a second copy of the gradients, kept for the run.
  // (Read in torch 1.9's distributed.py and a recent reducer.cpp, whose comm-optimised bucket pool is
  // off unless DDP_DISABLE_COMM_MEM=0: the default and the allocation are the same across them.)
  // DeepSpeed's stage 0 and FSDP NO_SHARD reduce without these copies.
  if (l.sharding == ShardingStrategy::ddp) t.buckets = bytes_for(t.grad_elems, b.gradient, "gradient bytes");

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
  t.load.stage = s.stage;
  t.load.count = s.count;
  t.load.model_parameters = s.params;
  t.load.host_bytes = host;
  t.load.host_pinned_bytes = pinned;
  gpu.parameters = weights;
  gpu.gradients = checked_add(grads, grad_copy);
  gpu.optimizer_state = checked_add(master, state);
  gpu.activations = s.activations;
  gpu.buffers = checked_add(checked_add(t.gathered, t.unsharded_copy), t.buckets);
  gpu.total = checked_add(checked_add(checked_add(gpu.parameters, gpu.gradients), gpu.optimizer_state),
                          checked_add(gpu.activations, gpu.buffers), "GPU bytes");
  return t;
}

std::vector<Slice> slices(const ShardingRequest& r, const ParallelLayout& l, ShardingArithmetic& a) {
  std::vector<Slice> out;
  const uint64_t per_stage = l.tp * l.dp;
  if (l.tp == 1 && l.pp == 1) {
    out.push_back({RankKind::all, 0, l.gpus, r.parameters, r.activation_bytes});
    return out;
  }
  const TransformerArch& arch = *r.arch;
  const std::vector<uint64_t> params = megatron_stage_parameters(arch, r.step, l.tp, l.pp);
  uint64_t total = 0;
  for (uint64_t p : params) total = checked_add(total, p);
  a.layers_per_stage = arch.layers / l.pp;
  a.padded_vocab = megatron_padded_vocab(arch.vocab, r.step.vocab_multiple, l.tp);
  a.tp_rank_parameters = total;
  auto stage = [&](uint64_t k, RankKind kind, uint64_t count) {
    return Slice{kind, k, count, params[k], megatron_stage_activation_bytes(arch, r.step, l, k)};
  };
  if (l.pp == 1) {
    out.push_back(stage(0, RankKind::all, l.gpus));
    return out;
  }
  out.push_back(stage(0, RankKind::first_stage, per_stage));
  // Middle stages hold the same parameters; stage 1 has the most micro-batches in flight.
  if (l.pp > 2) out.push_back(stage(1, RankKind::middle_stages, per_stage * (l.pp - 2)));
  out.push_back(stage(l.pp - 1, RankKind::last_stage, per_stage));
  return out;
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

  ShardingArithmetic& a = out.arithmetic;
  a.bytes = r.bytes;
  a.largest_layer_parameters = r.largest_layer_parameters;
  a.vocab_multiple = r.step.vocab_multiple;
  const std::vector<Slice> kinds = slices(r, l, a);
  size_t heaviest = 0;
  std::vector<Terms> terms;
  for (const Slice& s : kinds) {
    terms.push_back(rank_terms(r, l, group, s));
    out.ranks.push_back(terms.back().load);
    if (terms.back().load.gpu.total > terms[heaviest].load.gpu.total) heaviest = terms.size() - 1;
  }
  const Terms& t = terms[heaviest];
  out.most_loaded = heaviest;
  out.gpu = t.load.gpu;
  uint64_t host = 0, pinned = 0;
  for (const RankLoad& k : out.ranks) {
    host = std::max(host, k.host_bytes);
    pinned = std::max(pinned, k.host_pinned_bytes);
  }
  out.host_bytes_per_node = checked_mul(host, out.gpus_per_node, "host bytes");
  out.host_pinned_bytes_per_node = checked_mul(pinned, out.gpus_per_node, "host bytes");
  a.host_bytes_per_rank = host;
  a.trainable = t.trainable;
  a.weight_elements = t.weight_elems;
  a.gradient_elements = t.grad_elems;
  a.state_elements = t.state_elems;
  a.gathered_bytes = t.gathered;
  a.unsharded_copy_bytes = t.unsharded_copy;
  a.bucket_bytes = t.buckets;
  if (l.tp > 1 || l.pp > 1) {
    const LayerActivation la =
        korthikanti_layer_activation(*r.arch, r.step, l.tp, l.sequence_parallel, l.recompute);
    a.layer_activation = la.total;
    a.layer_replicated = la.replicated;
    a.layer_split = la.split;
    a.layer_scores = la.scores;
    a.layers_per_chunk = r.arch->layers / (l.pp * l.virtual_stages);
    a.chunks_in_flight = pipeline_in_flight(l.pp, t.stage, l.virtual_stages, l.micro_batches);
  }
  return out;
}

}  // namespace memplan
