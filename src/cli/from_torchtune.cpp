// --from: a torchtune recipe config (model._component_, lora_*, batch_size, dtype, ...).
#include <string>

#include "cli/from_config.hpp"
#include "cli/from_fields.hpp"

namespace memplan::cli {

namespace {

// torchtune's model builders (torchtune.models.<family>.<builder>) with a memplan preset.
const char* preset_for_builder(const std::string& builder) {
  static const std::pair<const char*, const char*> k_builders[] = {
      {"llama3_8b", "llama-3-8b"},   {"llama3_70b", "llama-3-70b"}, {"llama2_7b", "llama-2-7b"},
      {"llama2_13b", "llama-2-13b"}, {"llama2_70b", "llama-2-70b"}, {"mistral_7b", "mistral-7b"},
      {"gemma_2b", "gemma-2b"},      {"gemma_7b", "gemma-7b"},      {"qwen2_7b", "qwen2-7b"},
      {"phi3_mini", "phi-3-mini"},
  };
  for (const auto& [b, preset] : k_builders)
    if (builder == b) return preset;
  return nullptr;
}

// torchtune's attention module names in memplan's --lora-targets words.
std::string tune_attention_target(FromFields& f, const ConfigNode& n) {
  const std::string name = f.text("model.lora_attn_modules", n);
  if (name == "q_proj") return "q";
  if (name == "k_proj") return "k";
  if (name == "v_proj") return "v";
  if (name == "output_proj") return "o";
  f.fail("model.lora_attn_modules", n, "\"" + name + "\" is not q_proj, k_proj, v_proj or output_proj");
}

std::string tune_component(FromFields& f, const std::string& path) {
  const ConfigNode* n = f.get(path);
  return n ? f.text(path, *n) : "";
}

}  // namespace

void read_torchtune(const ConfigNode& root, FromReport& r) {
  FromFields f(root, r);
  const ConfigNode* component = f.get("model._component_");
  const std::string full = f.text("model._component_", *component);
  std::string builder = full.substr(full.rfind('.') + 1);
  const bool qlora = builder.rfind("qlora_", 0) == 0;
  const bool lora = qlora || builder.rfind("lora_", 0) == 0;
  builder = builder.substr(qlora ? 6 : lora ? 5 : 0);
  if (const char* preset = preset_for_builder(builder))
    f.use("model._component_", component, Field::model, preset, "torchtune builder " + builder);
  else
    f.not_modelled("model._component_", full, "a model builder without a memplan preset: give --model");
  if (lora) {
    const ConfigNode* rank = f.get("model.lora_rank");
    if (!rank) f.fail("model._component_", *component, "a LoRA builder needs model.lora_rank");
    f.use("model.lora_rank", rank, Field::lora, f.text("model.lora_rank", *rank));
    std::string targets;
    if (const ConfigNode* attn = f.get("model.lora_attn_modules")) {
      if (attn->kind != ConfigNode::Kind::list) f.fail("model.lora_attn_modules", *attn, "must be a list");
      for (const ConfigNode& m : attn->items)
        targets += (targets.empty() ? "" : ",") + tune_attention_target(f, m);
    }
    const ConfigNode* mlp = f.get("model.apply_lora_to_mlp");
    const bool on_mlp = mlp && f.boolean("model.apply_lora_to_mlp", *mlp);
    if (on_mlp) targets += std::string(targets.empty() ? "" : ",") + "gate,up,down";
    if (!targets.empty())
      f.use("model.lora_attn_modules", f.get("model.lora_attn_modules"), Field::lora_targets, targets,
            on_mlp ? "and the MLP's (model.apply_lora_to_mlp)" : "");
    if (const ConfigNode* out = f.get("model.apply_lora_to_output");
        out && f.boolean("model.apply_lora_to_output", *out))
      f.not_modelled("model.apply_lora_to_output", "true",
                     "an adapter on the output projection is not counted");
    if (const ConfigNode* n = f.get("model.lora_dropout"))
      f.use("model.lora_dropout", n, Field::lora_dropout, f.text("model.lora_dropout", *n));
    if (qlora)
      f.use("model._component_", component, Field::quantize, "nf4-dq",
            "torchao NF4: 4-bit blocks of 64, their scales quantized again");
  }
  if (const ConfigNode* n = f.get("batch_size"))
    f.use("batch_size", n, Field::batch, f.text("batch_size", *n));
  if (const ConfigNode* n = f.get("gradient_accumulation_steps"))
    f.use("gradient_accumulation_steps", n, Field::grad_accum, f.text("gradient_accumulation_steps", *n));
  if (const ConfigNode* n = f.get("dtype")) {
    const std::string d = f.text("dtype", *n);
    if (d != "bf16" && d != "fp32" && d != "fp16")
      f.fail("dtype", *n, "\"" + d + "\" is not bf16, fp16 or fp32");
    f.use("dtype", n, Field::precision, d, "torchtune trains in this dtype throughout");
  }
  if (const ConfigNode* n = f.get("enable_activation_checkpointing");
      n && f.boolean("enable_activation_checkpointing", *n))
    f.use("enable_activation_checkpointing", n, Field::checkpointing, "full");
  if (const ConfigNode* n = f.get("tokenizer.max_seq_len"))
    f.use("tokenizer.max_seq_len", n, Field::seq, f.text("tokenizer.max_seq_len", *n));
  else
    f.not_modelled("tokenizer.max_seq_len", "", "not set: rows as long as the data's; give --seq");
  const std::string optimizer = tune_component(f, "optimizer._component_");
  const std::string opt_name = optimizer.substr(optimizer.rfind('.') + 1);
  const char* opt = opt_name == "AdamW"            ? "adamw"
                    : opt_name == "Adam"           ? "adam"
                    : opt_name == "SGD"            ? "sgd"
                    : opt_name == "PagedAdamW8bit" ? "paged-adamw-8bit"
                    : opt_name == "PagedAdamW"     ? "paged-adamw"
                    : opt_name == "AdamW8bit"      ? "adamw-8bit"
                                                   : nullptr;
  if (opt)
    f.use("optimizer._component_", f.get("optimizer._component_"), Field::optimizer, opt);
  else if (!optimizer.empty())
    f.not_modelled("optimizer._component_", optimizer,
                   "an optimizer memplan does not know: give --optimizer");
  const std::string loss = tune_component(f, "loss._component_");
  if (loss.find("ChunkedOutputLoss") != std::string::npos ||
      loss.find("LinearCrossEntropyLoss") != std::string::npos)
    f.use("loss._component_", f.get("loss._component_"), Field::loss, "chunked", "logits in chunks");
  for (const char* key : {"optimizer_in_bwd", "enable_activation_offloading", "compile", "fsdp_cpu_offload"})
    if (const ConfigNode* n = f.get(key); n && f.boolean(key, *n))
      f.not_modelled(key, "true",
                     std::string(key) == "compile" ? "torch.compile's fusions are not modelled"
                     : std::string(key) == "optimizer_in_bwd"
                         ? "each gradient freed after its step: not modelled"
                         : "activation or parameter offload to the CPU is not modelled");
  f.known({"output_dir",
           "tokenizer",
           "checkpointer",
           "resume_from_checkpoint",
           "save_adapter_weights_only",
           "save_last_epoch_only",
           "epochs_to_save",
           "dataset",
           "seed",
           "shuffle",
           "optimizer",
           "lr_scheduler",
           "loss",
           "epochs",
           "max_steps_per_epoch",
           "clip_grad_norm",
           "metric_logger",
           "log_every_n_steps",
           "log_peak_memory_stats",
           "log_level",
           "device",
           "profiler",
           "model",
           "custom_sharded_layers"});
  f.finish();
}

}  // namespace memplan::cli
