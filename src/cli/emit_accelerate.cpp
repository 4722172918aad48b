// --emit accelerate: the run's layout and precision as accelerate config keys (the names
// from_accelerate.cpp reads back); the micro-batch, adapters and the rest are the script's.
#include <memplan/sharding.hpp>

#include "cli/emit_settings.hpp"

namespace memplan::cli {

namespace {

const char* accelerate_fsdp_strategy(ShardingStrategy s) {
  switch (s) {
    case ShardingStrategy::fsdp_full_shard:
      return "FULL_SHARD";
    case ShardingStrategy::fsdp_shard_grad_op:
      return "SHARD_GRAD_OP";
    case ShardingStrategy::fsdp_no_shard:
      return "NO_SHARD";
    case ShardingStrategy::fsdp_hybrid_shard:
      return "HYBRID_SHARD";
    default:
      return nullptr;
  }
}

int accelerate_zero_stage(ShardingStrategy s) {
  return s == ShardingStrategy::zero1   ? 1
         : s == ShardingStrategy::zero2 ? 2
         : s == ShardingStrategy::zero3 ? 3
         : s == ShardingStrategy::zero0 ? 0
                                        : -1;
}

}  // namespace

EmitSettings accelerate_settings(const EstimateRequest& r, const FromReport*) {
  EmitSettings s;
  const ParallelLayout l = r.parallel.value_or(ParallelLayout{});
  const char* fsdp = accelerate_fsdp_strategy(l.sharding);
  const int stage = accelerate_zero_stage(l.sharding);
  s.set("distributed_type", fsdp ? "FSDP" : stage >= 0 ? "DEEPSPEED" : l.gpus > 1 ? "MULTI_GPU" : "NO");
  s.set("num_processes", l.gpus);
  if (l.nodes > 1) s.set("num_machines", l.nodes);
  if (fsdp) {
    s.set("fsdp_config.fsdp_sharding_strategy", fsdp);
    if (l.offload == Offload::parameters) s.set("fsdp_config.fsdp_offload_params", true);
    if (l.offload == Offload::optimizer)
      s.cannot.push_back("optimizer-only offload under FSDP: FSDP offloads the parameters with it");
  } else if (stage >= 0) {
    s.set("deepspeed_config.zero_stage", stage);
    s.set("deepspeed_config.offload_optimizer_device", l.offload != Offload::none ? "cpu" : "none");
    s.set("deepspeed_config.offload_param_device", l.offload == Offload::parameters ? "cpu" : "none");
    s.set("deepspeed_config.gradient_accumulation_steps", r.grad_accum);
  }
  const std::string& p = r.recipe.name;
  if (p == "amp-bf16" || p == "amp-fp16" || p == "fp32")
    s.set("mixed_precision", p == "fp32" ? "no" : p.substr(4));
  else
    s.cannot.push_back("precision " + p +
                       ": accelerate's mixed_precision is autocast over fp32 weights; the weights' dtype is "
                       "the script's (from_pretrained(torch_dtype=...))");
  // What an accelerate config does not hold: the training script sets it.
  std::string script = "micro-batch " + std::to_string(r.batch);
  if (stage < 0 && r.grad_accum > 1)
    script += ", gradient accumulation " + std::to_string(r.grad_accum) +
              " (Accelerator(gradient_accumulation_steps=...))";
  if (r.seq) script += ", sequence length " + std::to_string(r.seq);
  if (r.checkpointing != Checkpointing::none)
    script += std::string(", checkpointing ") + to_string(r.checkpointing);
  script += ", optimizer " + r.optimizer.name;
  if (r.lora) script += ", LoRA rank " + std::to_string(r.lora->rank);
  s.cannot.push_back("the training script's, not accelerate's: " + script);
  return s;
}

}  // namespace memplan::cli
