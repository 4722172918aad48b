// --emit axolotl: the run as Axolotl config keys (the names from_axolotl.cpp reads back).
#include <memplan/sharding.hpp>
#include <memplan/storage_format.hpp>

#include "cli/emit_settings.hpp"

namespace memplan::cli {

namespace {

void axolotl_precision(const EstimateRequest& r, EmitSettings& s) {
  const std::string& p = r.recipe.name;
  if (p == "bf16" || p == "fp16" || p == "fp32") {  // Axolotl loads the weights in the training dtype
    s.set("bf16", p == "bf16");
    s.set("fp16", p == "fp16");
    return;
  }
  s.cannot.push_back("precision " + p +
                     ": Axolotl loads the weights in the training dtype (bf16: true loads them in bf16)");
}

void axolotl_adapters(const EstimateRequest& r, EmitSettings& s) {
  const bool four = is_nf4(r.quantize);
  if (r.lora) {
    s.set("adapter", four ? "qlora" : "lora");
    s.set("lora_r", r.lora->rank);
    s.set("lora_alpha", 2 * r.lora->rank);  // no memory effect: the usual 2 x rank
    if (lora_on_all_linear(*r.lora))
      s.set("lora_target_linear", true);
    else
      s.set("lora_target_modules", hf_lora_modules(*r.lora));
    if (r.lora->dropout > 0) s.set("lora_dropout", r.lora->dropout);
  }
  if (!r.quantize) return;
  if (four) {
    s.set("load_in_4bit", true);
    if (r.quantize == StorageFormatId::nf4)
      s.cannot.push_back(
          "nf4 without double quantization: Axolotl's QLoRA double-quantizes (nf4-dq), a little less memory");
  } else if (r.quantize == StorageFormatId::int8) {
    s.set("load_in_8bit", true);
  } else if ((r.quantize == StorageFormatId::bf16 || r.quantize == StorageFormatId::fp16) && r.lora) {
    s.cannot.push_back(std::string("frozen weights in ") + storage_format(*r.quantize).name + " under " +
                       r.recipe.name + ": Axolotl loads every weight in the training dtype (bf16: true)");
  } else {
    s.cannot.push_back("weights quantized to " + storage_format(*r.quantize).name +
                       ": not an Axolotl loading option");
  }
}

void axolotl_layout(const EstimateRequest& r, EmitSettings& s) {
  if (!r.parallel) return;
  const ParallelLayout& l = *r.parallel;
  using S = ShardingStrategy;
  const char* fsdp = l.sharding == S::fsdp_full_shard      ? "FULL_SHARD"
                     : l.sharding == S::fsdp_shard_grad_op ? "SHARD_GRAD_OP"
                     : l.sharding == S::fsdp_hybrid_shard  ? "HYBRID_SHARD"
                     : l.sharding == S::fsdp_no_shard      ? "NO_SHARD"
                                                           : nullptr;
  if (fsdp) {
    s.set("fsdp", nlohmann::json::array({l.sharding == S::fsdp_shard_grad_op  ? "shard_grad_op"
                                         : l.sharding == S::fsdp_hybrid_shard ? "hybrid_shard"
                                                                              : "full_shard",
                                         "auto_wrap"}));
    s.set("fsdp_config.fsdp_sharding_strategy", fsdp);
    if (l.offload == Offload::parameters) s.set("fsdp_config.fsdp_offload_params", true);
    if (l.offload == Offload::optimizer)
      s.cannot.push_back("optimizer-only offload under FSDP: FSDP offloads the parameters with it");
  } else if (l.sharding != S::ddp && l.sharding != S::zero0) {
    // Axolotl's own DeepSpeed files (deepspeed_configs/ in its repository).
    const bool z3 = l.sharding == S::zero3;
    const char* file = l.offload == Offload::parameters && z3
                           ? "deepspeed_configs/zero3_bf16_cpuoffload_all.json"
                       : l.offload != Offload::none ? nullptr
                       : z3                         ? "deepspeed_configs/zero3_bf16.json"
                       : l.sharding == S::zero2     ? "deepspeed_configs/zero2.json"
                                                    : "deepspeed_configs/zero1.json";
    if (file) {
      s.set("deepspeed", file);
      s.cannot.push_back(std::string("DeepSpeed ") + sharding_name(l.sharding) +
                         (l.offload != Offload::none ? " with " + offload_name(l.offload) + " offload" : "") +
                         ": the deepspeed key names a JSON (Axolotl's " + file +
                         "); --from reads it with its own --from");
    } else {
      s.cannot.push_back("DeepSpeed " + sharding_name(l.sharding) + " with " + offload_name(l.offload) +
                         " offload: Axolotl ships no such file; write one with --emit deepspeed and name it "
                         "in the deepspeed key");
    }
  }
  if (l.gpus > 1)
    s.launch.push_back("launch on " + std::to_string(l.gpus) + " GPUs" +
                       (l.nodes > 1 ? " over " + std::to_string(l.nodes) + " nodes" : "") +
                       ": accelerate launch --num_processes " + std::to_string(l.gpus) +
                       " -m axolotl.cli.train FILE");
}

}  // namespace

EmitSettings axolotl_settings(const EstimateRequest& r, const FromReport*) {
  EmitSettings s;
  s.set("micro_batch_size", r.batch);
  s.set("gradient_accumulation_steps", r.grad_accum);
  if (r.seq) s.set("sequence_len", r.seq);
  axolotl_precision(r, s);
  s.set("gradient_checkpointing", r.checkpointing != Checkpointing::none);
  if (r.checkpointing == Checkpointing::selective)
    s.cannot.push_back(
        "selective checkpointing: Axolotl checkpoints whole layers (full emitted: less memory, "
        "more compute)");
  if (const std::string o = hf_optimizer_name(r.optimizer.name); !o.empty())
    s.set("optimizer", o);
  else
    s.cannot.push_back("optimizer " + r.optimizer.name + ": no transformers optimizer of that name");
  axolotl_adapters(r, s);
  axolotl_layout(r, s);
  return s;
}

}  // namespace memplan::cli
