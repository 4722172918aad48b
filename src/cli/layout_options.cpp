#include "cli/layout_options.hpp"

#include <algorithm>
#include <string>

#include <memplan/error.hpp>
#include <memplan/sharding.hpp>
#include "core/parallel/inference_split.hpp"

namespace memplan::cli {
namespace {

// --mode infer with --gpus N: one model split over the N GPUs, as a flag given either changes the
// answer or is refused. Without --tp, tensor parallelism over N / pp GPUs (vLLM's usual
// `--tensor-parallel-size N`), said in a note; with --tp, tp x pp must be N (replicas of a server
// are separate servers, each with the same per-GPU memory).
void resolve_inference_gpus(const PlanValues& v, EstimateRequest& r, ParallelLayout& l) {
  const std::string n = std::to_string(l.gpus);
  if (l.gpus == 0) throw Error(Field::gpus, "must be at least 1");
  if (l.pp == 0) throw Error(Field::pp, "must be at least 1");
  if (!v.tp) {
    if (l.gpus % l.pp != 0)
      throw Error(Field::gpus, n + " GPUs do not split over " + field_ref(Field::pp) + " " +
                                   std::to_string(l.pp) + " stages (give " + field_ref(Field::tp) + ")");
    l.tp = l.gpus / l.pp;
    if (r.model.arch) {  // the heads must divide over the tp taken, named as the flag given
      try {
        inference_split(r.model, l.tp, l.pp);
      } catch (const Error& e) {
        throw Error(Field::gpus, n + " GPUs for inference split the model over tensor parallelism " +
                                     std::to_string(l.tp) + ", and " + e.message() + " (give " +
                                     field_ref(Field::tp) + " and " + field_ref(Field::pp) + ")");
      }
    }
    if (l.gpus > 1)
      r.model.notes.push_back(
          "--gpus " + n + " for inference: tensor parallelism over " + std::to_string(l.tp) + " GPUs" +
          (l.pp > 1 ? " x " + std::to_string(l.pp) + " pipeline stages" : "") +
          " (vLLM --tensor-parallel-size " + std::to_string(l.tp) + "); give --tp/--pp to split otherwise");
    return;
  }
  if (l.tp * l.pp != l.gpus)
    throw Error(Field::gpus, n + " GPUs, but inference splits one model over tp x pp = " +
                                 std::to_string(l.tp) + " x " + std::to_string(l.pp) + " = " +
                                 std::to_string(l.tp * l.pp) + " GPUs (replicas are separate servers: give " +
                                 field_ref(Field::gpus) + " " + std::to_string(l.tp * l.pp) + ")");
}

}  // namespace

// --gpus/--zero/--fsdp/--tp/...: a parallel layout, when any is given.
void resolve_layout(const PlanValues& v, EstimateRequest& r) {
  r.grad_format = v.grad_format.value_or(GradFormat::half);
  r.largest_layer = v.largest_layer.value_or(0);
  const bool any = v.gpus || v.gpus_auto || v.nodes || v.zero || v.fsdp || v.offload || v.tp || v.pp ||
                   v.dp || v.sequence_parallel || v.virtual_stages || v.micro_batches || v.prefetch;
  if (!any) return;
  if (v.zero && v.fsdp) throw Error(Field::zero, "cannot be combined with --fsdp (pick one engine)");
  ParallelLayout l;
  if (v.gpus) l.gpus = *v.gpus;
  l.nodes = v.nodes.value_or(1);
  if (v.zero) l.sharding = *v.zero;
  if (v.fsdp) l.sharding = *v.fsdp;
  // --gpus auto without an engine: search every ZeRO stage, lowest first.
  if (v.gpus_auto && !v.zero && !v.fsdp) l.sharding = ShardingStrategy::zero3;
  if (v.offload) l.offload = *v.offload;
  l.tp = v.tp.value_or(1);
  l.pp = v.pp.value_or(1);
  l.dp = v.dp.value_or(0);
  if (!v.gpus && !v.gpus_auto && (l.tp > 1 || l.pp > 1 || l.dp))
    l.gpus = l.tp * l.pp * std::max<uint64_t>(l.dp, 1);
  if (!v.nodes) {  // GPUs beyond one node fill whole nodes of --gpus-per-node (8)
    const uint64_t per_node = v.gpus_per_node.value_or(8);
    l.nodes = l.gpus > per_node && l.gpus % per_node == 0 ? l.gpus / per_node : 1;
  }
  if (r.mode == Mode::infer && v.gpus) resolve_inference_gpus(v, r, l);
  l.sequence_parallel = v.sequence_parallel;
  l.virtual_stages = v.virtual_stages.value_or(1);
  l.micro_batches = v.micro_batches.value_or(0);
  l.prefetch_layers = v.prefetch.value_or(1);
  r.parallel = l;
}

}  // namespace memplan::cli
