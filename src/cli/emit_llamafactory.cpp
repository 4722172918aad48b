// --emit llamafactory: the run as LLaMA-Factory training YAML keys (the names
// from_llamafactory.cpp reads back; its defaults written out, since a key left out means them).
#include <algorithm>

#include <memplan/sharding.hpp>
#include <memplan/storage_format.hpp>

#include "cli/emit_settings.hpp"

namespace memplan::cli {

namespace {

void llamafactory_precision(const EstimateRequest& r, EmitSettings& s) {
  const std::string& p = r.recipe.name;
  if (p == "bf16" || p == "fp16") {  // LLaMA-Factory loads the weights in the compute dtype
    s.set("bf16", p == "bf16");
    s.set("fp16", p == "fp16");
    return;
  }
  s.cannot.push_back("precision " + p +
                     ": LLaMA-Factory loads the weights in the compute dtype (bf16: true or fp16: true)");
}

void llamafactory_adapters(const EstimateRequest& r, EmitSettings& s) {
  if (!r.lora) {
    s.set("finetuning_type", "full");  // LLaMA-Factory's default is lora
  } else {
    s.set("finetuning_type", "lora");
    s.set("lora_rank", r.lora->rank);
    std::string targets;
    for (const std::string& m : hf_lora_modules(*r.lora)) targets += (targets.empty() ? "" : ",") + m;
    s.set("lora_target", lora_on_all_linear(*r.lora) ? std::string("all") : targets);
    if (r.lora->dropout > 0) s.set("lora_dropout", r.lora->dropout);
  }
  if (!r.quantize) return;
  if (is_nf4(r.quantize)) {
    s.set("quantization_bit", 4);
    if (r.quantize == StorageFormatId::nf4) s.set("double_quantization", false);  // default true
  } else if (r.quantize == StorageFormatId::int8) {
    s.set("quantization_bit", 8);
  } else if ((r.quantize == StorageFormatId::bf16 || r.quantize == StorageFormatId::fp16) && r.lora) {
    s.cannot.push_back(std::string("frozen weights in ") + storage_format(*r.quantize).name + " under " +
                       r.recipe.name +
                       ": LLaMA-Factory loads every weight in the compute dtype (bf16: true)");
  } else {
    s.cannot.push_back("weights quantized to " + storage_format(*r.quantize).name +
                       ": not a LLaMA-Factory quantization_bit");
  }
}

void llamafactory_layout(const EstimateRequest& r, EmitSettings& s) {
  if (!r.parallel) return;
  const ParallelLayout& l = *r.parallel;
  using S = ShardingStrategy;
  // LLaMA-Factory's own DeepSpeed files (examples/deepspeed/ in its repository).
  const char* file = nullptr;
  if (l.sharding == S::zero3)
    file = l.offload == Offload::parameters ? "examples/deepspeed/ds_z3_offload_config.json"
           : l.offload == Offload::none     ? "examples/deepspeed/ds_z3_config.json"
                                            : nullptr;
  else if (l.sharding == S::zero2)
    file = l.offload == Offload::optimizer ? "examples/deepspeed/ds_z2_offload_config.json"
           : l.offload == Offload::none    ? "examples/deepspeed/ds_z2_config.json"
                                           : nullptr;
  else if (l.sharding == S::zero0 && l.offload == Offload::none)
    file = "examples/deepspeed/ds_z0_config.json";
  if (file) {
    s.set("deepspeed", file);
    s.cannot.push_back("DeepSpeed " + sharding_name(l.sharding) +
                       ": the deepspeed key names LLaMA-Factory's " + file +
                       "; --from reads that JSON with its own --from");
  } else if (l.sharding != S::ddp) {
    s.cannot.push_back(sharding_name(l.sharding) +
                       (l.offload != Offload::none ? " with " + offload_name(l.offload) + " offload" : "") +
                       ": no LLaMA-Factory file for it; write a DeepSpeed JSON with --emit deepspeed (or an "
                       "accelerate FSDP config with --emit accelerate) and name it in the deepspeed key");
  }
  if (l.gpus > 1)
    s.launch.push_back(
        "launch on " + std::to_string(l.gpus) +
        " GPUs: FORCE_TORCHRUN=1 NPROC_PER_NODE=" + std::to_string(l.gpus / std::max<uint64_t>(l.nodes, 1)) +
        (l.nodes > 1 ? " NNODES=" + std::to_string(l.nodes) : "") + " llamafactory-cli train FILE");
}

}  // namespace

EmitSettings llamafactory_settings(const EstimateRequest& r, const FromReport*) {
  EmitSettings s;
  llamafactory_adapters(r, s);
  if (r.seq) s.set("cutoff_len", r.seq);
  s.set("per_device_train_batch_size", r.batch);
  s.set("gradient_accumulation_steps", r.grad_accum);
  llamafactory_precision(r, s);
  s.set("disable_gradient_checkpointing", r.checkpointing == Checkpointing::none);
  if (r.checkpointing == Checkpointing::selective)
    s.cannot.push_back(
        "selective checkpointing: LLaMA-Factory checkpoints whole layers (full emitted: less "
        "memory, more compute)");
  if (const std::string o = hf_optimizer_name(r.optimizer.name); !o.empty())
    s.set("optim", o);
  else
    s.cannot.push_back("optimizer " + r.optimizer.name + ": no transformers optimizer of that name");
  llamafactory_layout(r, s);
  return s;
}

}  // namespace memplan::cli
