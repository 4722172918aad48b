// --emit deepspeed: the run as DeepSpeed config keys (the names from_deepspeed.cpp reads back):
// the ZeRO stage, offload, bf16/fp16, the micro-batch and accumulation.
#include <memplan/sharding.hpp>
#include <memplan/storage_format.hpp>

#include "cli/emit_settings.hpp"

namespace memplan::cli {

EmitSettings deepspeed_settings(const EstimateRequest& r, const FromReport* from) {
  EmitSettings s;
  const ParallelLayout l = r.parallel.value_or(ParallelLayout{});
  using S = ShardingStrategy;
  const int stage = l.sharding == S::zero1                           ? 1
                    : l.sharding == S::zero2                         ? 2
                    : l.sharding == S::zero3                         ? 3
                    : l.sharding == S::zero0 || l.sharding == S::ddp ? 0
                                                                     : -1;
  if (stage < 0) {
    s.cannot.push_back(sharding_name(l.sharding) + ": PyTorch FSDP, not DeepSpeed (try --emit accelerate)");
  } else {
    s.set("zero_optimization.stage", stage);
    const nlohmann::json cpu = {{"device", "cpu"}, {"pin_memory", true}};
    if (l.offload != Offload::none) s.set("zero_optimization.offload_optimizer", cpu);
    if (l.offload == Offload::parameters) s.set("zero_optimization.offload_param", cpu);
  }
  const std::string& p = r.recipe.name;
  if (p == "mixed-bf16" || p == "mixed-fp16" || p == "fp32") {
    s.set("bf16.enabled", p == "mixed-bf16");
    s.set("fp16.enabled", p == "mixed-fp16");
  } else {
    s.cannot.push_back("precision " + p + ": DeepSpeed's bf16/fp16 keep an fp32 master copy (mixed-bf16)");
  }
  s.set("train_micro_batch_size_per_gpu", r.batch);
  s.set("gradient_accumulation_steps", r.grad_accum);
  // DeepSpeed checks train_batch_size = micro-batch x accumulation x GPUs: a number in the file stays in
  // step.
  if (from)
    for (const FromField& f : from->not_modelled)
      if (f.field == "train_batch_size" && f.value != "auto")
        s.set("train_batch_size", r.batch * r.grad_accum * l.gpus);
  // The optimizer is the trainer's (--optim) unless an optimizer block overrides it.
  if (r.optimizer.name != "adamw" && r.optimizer.name != "adam")
    s.cannot.push_back(
        "optimizer " + r.optimizer.name +
        ": not a DeepSpeed optimizer type; leave out the optimizer block and give the trainer --optim " +
        (hf_optimizer_name(r.optimizer.name).empty() ? r.optimizer.name
                                                     : hf_optimizer_name(r.optimizer.name)));
  std::string trainer;  // what the trainer sets, not DeepSpeed
  if (r.seq) trainer += "sequence length " + std::to_string(r.seq);
  if (r.checkpointing != Checkpointing::none)
    trainer += std::string(trainer.empty() ? "" : ", ") + "checkpointing " + to_string(r.checkpointing) +
               " (--gradient_checkpointing)";
  if (r.lora)
    trainer += std::string(trainer.empty() ? "" : ", ") + "LoRA rank " + std::to_string(r.lora->rank);
  if (r.quantize)
    trainer += std::string(trainer.empty() ? "" : ", ") + "weights in " + storage_format(*r.quantize).name;
  if (!trainer.empty()) s.cannot.push_back("the trainer's, not DeepSpeed's: " + trainer);
  if (l.gpus > 1)
    s.launch.push_back("launch on " + std::to_string(l.gpus) + " GPUs: deepspeed --num_gpus " +
                       std::to_string(l.gpus) + " (train_batch_size = micro-batch x accumulation x GPUs)");
  return s;
}

}  // namespace memplan::cli
