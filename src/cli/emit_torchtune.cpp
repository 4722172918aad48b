// --emit torchtune: the run as torchtune recipe config keys (the names from_torchtune.cpp reads
// back): the model builder (lora_ / qlora_ before its name for adapters), batch_size, dtype, ...
#include <algorithm>
#include <utility>

#include <memplan/sharding.hpp>
#include <memplan/storage_format.hpp>

#include "cli/emit_settings.hpp"

namespace memplan::cli {

namespace {

// The builder of a memplan preset (torchtune/models/<family>/_model_builders.py).
std::string tune_builder_for(const std::string& preset) {
  static const std::pair<const char*, const char*> k_builders[] = {
      {"llama-3-8b", "torchtune.models.llama3.llama3_8b"},
      {"llama-3-70b", "torchtune.models.llama3.llama3_70b"},
      {"llama-2-7b", "torchtune.models.llama2.llama2_7b"},
      {"llama-2-13b", "torchtune.models.llama2.llama2_13b"},
      {"llama-2-70b", "torchtune.models.llama2.llama2_70b"},
      {"mistral-7b", "torchtune.models.mistral.mistral_7b"},
      {"gemma-2b", "torchtune.models.gemma.gemma_2b"},
      {"gemma-7b", "torchtune.models.gemma.gemma_7b"},
      {"qwen2-7b", "torchtune.models.qwen2.qwen2_7b"},
      {"phi-3-mini", "torchtune.models.phi3.phi3_mini"},
  };
  for (const auto& [p, builder] : k_builders)
    if (preset == p) return builder;
  return "";
}

// The file's builder without its lora_ / qlora_ prefix, else the preset's.
std::string tune_base_builder(const EstimateRequest& r, const FromReport* from) {
  std::string full;
  if (from)
    for (const FromField& u : from->used)
      if (u.field == "model._component_") full = u.value;
  if (full.empty()) full = tune_builder_for(r.model.id);
  if (full.empty()) return "";
  const size_t dot = full.rfind('.') + 1;
  std::string name = full.substr(dot);
  for (const char* prefix : {"qlora_", "lora_"})
    if (name.rfind(prefix, 0) == 0) name = name.substr(std::string(prefix).size());
  return full.substr(0, dot) + name;
}

const char* tune_optimizer(const std::string& o) {
  return o == "adamw"              ? "torch.optim.AdamW"
         : o == "adam"             ? "torch.optim.Adam"
         : o == "sgd"              ? "torch.optim.SGD"
         : o == "adamw-8bit"       ? "bitsandbytes.optim.AdamW8bit"
         : o == "paged-adamw-8bit" ? "bitsandbytes.optim.PagedAdamW8bit"
         : o == "paged-adamw"      ? "bitsandbytes.optim.PagedAdamW"
                                   : nullptr;
}

void tune_adapters(const EstimateRequest& r, const FromReport* from, EmitSettings& s) {
  const bool four = is_nf4(r.quantize);
  const std::string base = tune_base_builder(r, from);
  if (base.empty()) {
    s.cannot.push_back("model " + r.model.id + ": no torchtune builder memplan knows; set model._component_");
  } else {
    const size_t dot = base.rfind('.') + 1;
    s.set("model._component_", base.substr(0, dot) +
                                   (four && r.lora ? "qlora_"
                                    : r.lora       ? "lora_"
                                                   : "") +
                                   base.substr(dot));
  }
  if (r.lora) {
    const LoraTargets& t = *r.lora;
    nlohmann::json attn = nlohmann::json::array();
    for (const auto& [on, name] : {std::pair{t.q, "q_proj"}, std::pair{t.k, "k_proj"},
                                   std::pair{t.v, "v_proj"}, std::pair{t.o, "output_proj"}})
      if (on) attn.push_back(name);
    s.set("model.lora_attn_modules", attn);
    const bool mlp = t.gate && t.up && t.down;
    s.set("model.apply_lora_to_mlp", mlp);
    if (!mlp && (t.gate || t.up || t.down))
      s.cannot.push_back(
          "LoRA on part of the MLP: torchtune adapts gate, up and down together "
          "(model.apply_lora_to_mlp)");
    s.set("model.lora_rank", t.rank);
    s.set("model.lora_alpha", 2 * t.rank);  // no memory effect: the usual 2 x rank
    if (t.dropout > 0) s.set("model.lora_dropout", t.dropout);
  }
  if (!r.quantize) return;
  if (four && r.lora) {
    if (r.quantize == StorageFormatId::nf4)
      s.cannot.push_back(
          "nf4 without double quantization: torchtune's QLoRA (torchao NF4) quantizes the scales "
          "too (nf4-dq), a little less memory");
  } else if ((r.quantize == StorageFormatId::bf16 || r.quantize == StorageFormatId::fp16) && r.lora) {
    s.cannot.push_back(std::string("frozen weights in ") + storage_format(*r.quantize).name + " under " +
                       r.recipe.name + ": torchtune holds every weight in its dtype");
  } else {
    s.cannot.push_back("weights quantized to " + storage_format(*r.quantize).name +
                       ": torchtune quantizes only with a qlora_ builder");
  }
}

}  // namespace

EmitSettings torchtune_settings(const EstimateRequest& r, const FromReport* from) {
  EmitSettings s;
  tune_adapters(r, from, s);
  if (r.seq) s.set("tokenizer.max_seq_len", r.seq);
  s.set("batch_size", r.batch);
  s.set("gradient_accumulation_steps", r.grad_accum);
  const std::string& p = r.recipe.name;
  if (p == "bf16" || p == "fp16" || p == "fp32")
    s.set("dtype", p);
  else
    s.cannot.push_back("precision " + p + ": torchtune trains in one dtype throughout (dtype: bf16)");
  s.set("enable_activation_checkpointing", r.checkpointing != Checkpointing::none);
  if (r.checkpointing == Checkpointing::selective)
    s.cannot.push_back(
        "selective checkpointing: emitted as enable_activation_checkpointing (whole layers: less "
        "memory, more compute)");
  if (const char* o = tune_optimizer(r.optimizer.name))
    s.set("optimizer._component_", o);
  else
    s.cannot.push_back("optimizer " + r.optimizer.name +
                       ": no torchtune optimizer component memplan reads back");
  if (r.lora && (!from || from->values.count("lora") == 0))
    s.launch.push_back(
        "adapters need a LoRA recipe (tune run lora_finetune_single_device, or "
        "lora_finetune_distributed) and its checkpointer keys");
  if (r.parallel) {
    const ParallelLayout& l = *r.parallel;
    if (l.sharding != ShardingStrategy::fsdp_full_shard && l.sharding != ShardingStrategy::zero3 &&
        l.sharding != ShardingStrategy::ddp)
      s.cannot.push_back(sharding_name(l.sharding) + ": torchtune's distributed recipes shard fully (FSDP2)");
    if (l.offload != Offload::none)
      s.cannot.push_back(offload_name(l.offload) +
                         " offload: torchtune's fsdp_cpu_offload: true offloads the parameters and optimizer "
                         "(--from does not model it)");
    if (l.gpus > 1)
      s.launch.push_back("launch on " + std::to_string(l.gpus) + " GPUs: tune run --nproc_per_node " +
                         std::to_string(l.gpus / std::max<uint64_t>(l.nodes, 1)) +
                         " a _distributed recipe --config FILE");
  }
  return s;
}

}  // namespace memplan::cli
