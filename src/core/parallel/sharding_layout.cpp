// Checking a parallel layout: every impossible combination is an Error naming its option.
#include <memplan/sharding.hpp>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"

namespace memplan {

namespace {

std::string n(uint64_t v) { return std::to_string(v); }

}  // namespace

ParallelLayout validate_layout(const ParallelLayout& in, const std::optional<TransformerArch>& arch,
                               const TransformerStep& step) {
  ParallelLayout l = in;
  if (l.gpus == 0) throw Error(Field::gpus, "must be at least 1");
  if (l.nodes == 0) throw Error(Field::nodes, "must be at least 1");
  if (l.gpus % l.nodes != 0)
    throw Error(Field::nodes, n(l.gpus) + " GPUs do not split evenly over " + n(l.nodes) + " nodes");
  if (l.tp == 0) throw Error(Field::tp, "must be at least 1");
  if (l.pp == 0) throw Error(Field::pp, "must be at least 1");
  if (l.virtual_stages == 0) throw Error(Field::virtual_stages, "must be at least 1");
  const uint64_t model_parallel = checked_mul(l.tp, l.pp, "tp x pp");
  if (l.dp == 0) {
    if (l.gpus % model_parallel != 0)
      throw Error(Field::gpus, n(l.gpus) + " GPUs are not a multiple of tp x pp = " + n(l.tp) + " x " +
                                   n(l.pp) + " = " + n(model_parallel));
    l.dp = l.gpus / model_parallel;
  } else {
    const uint64_t world = checked_mul(model_parallel, l.dp, "tp x pp x dp");
    if (world != l.gpus)
      throw Error(Field::dp, "tp x pp x dp = " + n(l.tp) + " x " + n(l.pp) + " x " + n(l.dp) + " = " +
                                 n(world) + ", but " + field_ref(Field::gpus) + " is " + n(l.gpus));
  }

  const int level = sharding_level(l.sharding);
  const bool fsdp = is_fsdp(l.sharding);
  if (l.pp > 1 && !fsdp && level >= 2)
    throw Error(Field::zero, "ZeRO stage " + n(static_cast<uint64_t>(level)) +
                                 " does not combine with pipeline parallelism (" + field_ref(Field::pp) +
                                 " " + n(l.pp) + "); DeepSpeed's pipeline engine supports stages 0 and 1");
  if (l.offload == Offload::optimizer && fsdp)
    throw Error(Field::offload,
                "FSDP offloads parameters, gradients and optimizer state together "
                "(CPUOffload(offload_params=True)); use " +
                    field_ref(Field::offload) + " parameters");
  if (l.offload != Offload::none && !fsdp && level == 0)
    throw Error(Field::offload, "offloading needs ZeRO stage 1-3 (" + field_ref(Field::zero) + ") or FSDP (" +
                                    field_ref(Field::fsdp) + ")");
  if (l.offload == Offload::parameters && !fsdp && level != 3)
    throw Error(Field::offload,
                "offloading parameters needs ZeRO stage 3 (DeepSpeed offload_param); "
                "stages 1-2 offload the optimizer only");

  if (l.sequence_parallel && l.tp == 1)
    throw Error(Field::sequence_parallel, "needs tensor parallelism (" + field_ref(Field::tp) + " > 1)");
  if (l.virtual_stages > 1 && l.pp == 1)
    throw Error(Field::virtual_stages,
                "interleaving needs pipeline parallelism (" + field_ref(Field::pp) + " > 1)");

  const bool model_parallelism = l.tp > 1 || l.pp > 1;
  if (model_parallelism && !arch)
    throw Error(l.tp > 1 ? Field::tp : Field::pp,
                "tensor and pipeline parallelism need the model's architecture (" + field_ref(Field::model) +
                    ", " + field_ref(Field::config) + ", or " + field_ref(Field::layers) + "/" +
                    field_ref(Field::hidden) + "/" + field_ref(Field::heads) + ")");
  if (arch && model_parallelism) {
    const TransformerArch& a = *arch;
    if (a.layers == 0 || a.hidden == 0 || a.heads == 0)
      throw Error(Field::tp, "the architecture lacks layers, hidden size or heads");
    if (a.heads % l.tp != 0)
      throw Error(Field::tp, n(a.heads) + " attention heads do not divide over tp " + n(l.tp));
    if (a.resolved_kv_heads() % l.tp != 0)
      throw Error(Field::tp, n(a.resolved_kv_heads()) + " key/value heads do not divide over tp " + n(l.tp) +
                                 " (Megatron needs num_query_groups % tp == 0)");
    const uint64_t inner = a.intermediate ? a.intermediate : 4 * a.hidden;
    if (inner % l.tp != 0)
      throw Error(Field::tp, "MLP width " + n(inner) + " does not divide over tp " + n(l.tp));
    const uint64_t chunks = checked_mul(l.pp, l.virtual_stages, "pp x virtual stages");
    if (a.layers % chunks != 0)
      throw Error(Field::pp, n(a.layers) + " layers do not divide into pp x virtual stages = " + n(chunks) +
                                 " equal chunks (Megatron requires layers % (pp x v) == 0)");
    if (step.seq == 0) throw Error(Field::seq, "the activation model for tp/pp needs the sequence length");
    if (step.micro_batch == 0) throw Error(Field::batch, "must be at least 1");
    if (l.sequence_parallel && step.seq % l.tp != 0)
      throw Error(Field::sequence_parallel,
                  "sequence length " + n(step.seq) + " does not divide over tp " + n(l.tp));
  }
  return l;
}

}  // namespace memplan
