// --emit trainer: the run as transformers TrainingArguments command-line flags (the keys of its
// JSON too): micro-batch, accumulation, checkpointing, bf16/fp16, --optim, --deepspeed, --fsdp.
#include <algorithm>

#include <memplan/sharding.hpp>
#include <memplan/storage_format.hpp>

#include "cli/emit_settings.hpp"

namespace memplan::cli {

EmitSettings trainer_settings(const EstimateRequest& r, const FromReport*) {
  EmitSettings s;
  s.set("--per_device_train_batch_size", r.batch);
  s.set("--gradient_accumulation_steps", r.grad_accum);
  s.set("--gradient_checkpointing", r.checkpointing != Checkpointing::none);
  if (r.checkpointing == Checkpointing::selective)
    s.cannot.push_back("selective checkpointing: transformers checkpoints whole layers (full emitted)");
  const std::string& p = r.recipe.name;
  // TrainingArguments' bf16/fp16 autocast; the weights' dtype is from_pretrained's torch_dtype.
  if (p == "amp-bf16" || p == "bf16" || p == "mixed-bf16") s.set("--bf16", true);
  if (p == "amp-fp16" || p == "fp16" || p == "mixed-fp16") s.set("--fp16", true);
  if (p == "bf16" || p == "fp16")
    s.cannot.push_back("precision " + p + ": load the model with torch_dtype=torch." +
                       (p == "bf16" ? "bfloat16" : "float16") + " (a model argument, not TrainingArguments)");
  if (const std::string o = hf_optimizer_name(r.optimizer.name); !o.empty())
    s.set("--optim", o);
  else
    s.cannot.push_back("optimizer " + r.optimizer.name + ": no transformers optimizer of that name");
  if (r.parallel) {
    const ParallelLayout& l = *r.parallel;
    using S = ShardingStrategy;
    const char* fsdp = l.sharding == S::fsdp_full_shard      ? "full_shard"
                       : l.sharding == S::fsdp_shard_grad_op ? "shard_grad_op"
                       : l.sharding == S::fsdp_hybrid_shard  ? "hybrid_shard"
                       : l.sharding == S::fsdp_no_shard      ? "no_shard"
                                                             : nullptr;
    if (fsdp)
      s.set("--fsdp", std::string(fsdp) + (l.offload != Offload::none ? " offload" : "") + " auto_wrap");
    else if (l.sharding != S::ddp)
      s.set("--deepspeed", "ds_config.json");
    if (!fsdp && l.sharding != S::ddp)
      s.launch.push_back("write ds_config.json with --emit deepspeed (" + sharding_name(l.sharding) +
                         (l.offload != Offload::none ? ", " + offload_name(l.offload) + " offload" : "") +
                         ")");
    if (l.gpus > 1)
      s.launch.push_back("launch on " + std::to_string(l.gpus) + " GPUs: torchrun --nproc_per_node " +
                         std::to_string(l.gpus / std::max<uint64_t>(l.nodes, 1)) + " train.py ...");
  }
  // Not TrainingArguments: TRL's `trl sft` takes them (SFTConfig, ModelConfig).
  std::string trl;
  if (r.seq) trl += "--max_length " + std::to_string(r.seq);
  if (r.lora) {
    trl += std::string(trl.empty() ? "" : " ") + "--use_peft --lora_r " + std::to_string(r.lora->rank) +
           " --lora_target_modules";
    for (const std::string& m : hf_lora_modules(*r.lora)) trl += " " + m;
  }
  if (is_nf4(r.quantize))
    trl += std::string(trl.empty() ? "" : " ") + "--load_in_4bit --bnb_4bit_quant_type nf4" +
           (r.quantize == StorageFormatId::nf4_dq ? " --use_bnb_nested_quant" : "");
  else if (r.quantize == StorageFormatId::int8)
    trl += std::string(trl.empty() ? "" : " ") + "--load_in_8bit";
  if (!trl.empty()) s.cannot.push_back("not TrainingArguments (TRL's trl sft takes them): " + trl);
  return s;
}

}  // namespace memplan::cli
