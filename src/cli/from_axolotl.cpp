// --from: an Axolotl config YAML (base_model, adapter, lora_*, sequence_len, micro_batch_size, ...).
#include "cli/from_config.hpp"
#include "cli/from_fields.hpp"

namespace memplan::cli {

namespace {

void axolotl_fsdp(FromFields& f) {
  const ConfigNode* fsdp = f.get("fsdp");
  const ConfigNode* strategy = f.get("fsdp_config.fsdp_sharding_strategy");
  if (!fsdp && !strategy) return;
  std::string mode;
  if (strategy) {
    const std::string s = f.text("fsdp_config.fsdp_sharding_strategy", *strategy);
    mode = s == "FULL_SHARD"      ? "full-shard"
           : s == "SHARD_GRAD_OP" ? "shard-grad-op"
           : s == "NO_SHARD"      ? "no-shard"
           : s == "HYBRID_SHARD"  ? "hybrid-shard"
                                  : "";
    if (mode.empty())
      f.fail("fsdp_config.fsdp_sharding_strategy", *strategy,
             "\"" + s + "\" is not FULL_SHARD, SHARD_GRAD_OP, NO_SHARD or HYBRID_SHARD");
    f.use("fsdp_config.fsdp_sharding_strategy", strategy, Field::fsdp, mode);
  } else {
    const std::string list = joined_names(f, "fsdp", *fsdp);
    mode = list.find("shard_grad_op") != std::string::npos  ? "shard-grad-op"
           : list.find("hybrid_shard") != std::string::npos ? "hybrid-shard"
                                                            : "full-shard";
    f.use("fsdp", fsdp, Field::fsdp, mode);
  }
  if (const ConfigNode* n = f.get("fsdp_config.fsdp_offload_params");
      n && f.boolean("fsdp_config.fsdp_offload_params", *n))
    f.use("fsdp_config.fsdp_offload_params", n, Field::offload, "parameters");
}

}  // namespace

void read_axolotl(const ConfigNode& root, FromReport& r) {
  FromFields f(root, r);
  f.use_model("base_model");
  const ConfigNode* adapter = f.get("adapter");
  const std::string kind = adapter ? f.text("adapter", *adapter) : "";
  if (!kind.empty()) {
    if (kind != "lora" && kind != "qlora")
      f.fail("adapter", *adapter, "\"" + kind + "\" is not lora or qlora");
    const ConfigNode* rank = f.get("lora_r");
    if (!rank) f.fail("adapter", *adapter, "needs lora_r (the adapters' rank)");
    f.use("lora_r", rank, Field::lora, f.text("lora_r", *rank));
    const ConfigNode* linear = f.get("lora_target_linear");
    if (linear && f.boolean("lora_target_linear", *linear)) {
      f.use("lora_target_linear", linear, Field::lora_targets, "all", "every linear layer of the blocks");
    } else if (const ConfigNode* mods = f.get("lora_target_modules")) {
      f.use("lora_target_modules", mods, Field::lora_targets, joined_names(f, "lora_target_modules", *mods));
    }
    if (const ConfigNode* n = f.get("lora_dropout"))
      f.use("lora_dropout", n, Field::lora_dropout, f.text("lora_dropout", *n));
    if (const ConfigNode* n = f.get("lora_modules_to_save"))
      f.not_modelled("lora_modules_to_save", joined_names(f, "lora_modules_to_save", *n),
                     "these modules train in full beside the adapters (their gradients and optimizer state)");
  }
  const ConfigNode* in4 = f.get("load_in_4bit");
  const ConfigNode* in8 = f.get("load_in_8bit");
  const bool four = in4 && f.boolean("load_in_4bit", *in4), eight = in8 && f.boolean("load_in_8bit", *in8);
  if (four && eight) f.fail("load_in_8bit", *in8, "cannot be true with load_in_4bit");
  // Axolotl's QLoRA BitsAndBytesConfig: nf4 with double quantization.
  if (four)
    f.use("load_in_4bit", in4, Field::quantize, "nf4-dq",
          "bitsandbytes nf4, double quantization (Axolotl's QLoRA)");
  if (eight) f.use("load_in_8bit", in8, Field::quantize, "int8", "bitsandbytes LLM.int8()");
  if (const ConfigNode* n = f.get("sequence_len"))
    f.use("sequence_len", n, Field::seq, f.text("sequence_len", *n));
  if (const ConfigNode* n = f.get("micro_batch_size"))
    f.use("micro_batch_size", n, Field::batch, f.text("micro_batch_size", *n));
  if (const ConfigNode* n = f.get("gradient_accumulation_steps"))
    f.use("gradient_accumulation_steps", n, Field::grad_accum, f.text("gradient_accumulation_steps", *n));
  const ConfigNode* bf16 = f.get("bf16");
  const ConfigNode* fp16 = f.get("fp16");
  const bool is_bf16 = bf16 && (f.text("bf16", *bf16) == "auto" || f.boolean("bf16", *bf16));
  const bool is_fp16 = fp16 && f.boolean("fp16", *fp16);
  // Axolotl loads the weights in the training dtype: bf16 weights, autocast on top.
  if (is_bf16)
    f.use("bf16", bf16, Field::precision, "bf16",
          bf16->text == "auto" ? "auto: bf16 where the GPU has it" : "");
  else if (is_fp16)
    f.use("fp16", fp16, Field::precision, "fp16");
  if (const ConfigNode* n = f.get("gradient_checkpointing");
      n && f.text("gradient_checkpointing", *n) != "false")
    f.use("gradient_checkpointing", n, Field::checkpointing, "full");
  f.use_optimizer("optimizer");
  for (const char* attn : {"flash_attention", "sdp_attention", "xformers_attention"})
    if (const ConfigNode* n = f.get(attn); n && f.boolean(attn, *n))
      f.use(attn, n, Field::attention, "sdpa", "fused attention");
  for (const char* fused : {"liger_fused_linear_cross_entropy", "cut_cross_entropy"})
    if (const ConfigNode* n = f.get(fused); n && f.boolean(fused, *n)) f.use(fused, n, Field::loss, "fused");
  axolotl_fsdp(f);
  if (const ConfigNode* n = f.get("deepspeed"))
    f.not_modelled("deepspeed", f.text("deepspeed", *n),
                   "a DeepSpeed config: read it with a second --from, or give --zero");
  if (const ConfigNode* n = f.get("eval_batch_size"))
    f.not_modelled("eval_batch_size", f.text("eval_batch_size", *n), "evaluation steps are not planned");
  if (const ConfigNode* n = f.get("rl"))
    f.not_modelled("rl", f.text("rl", *n),
                   "preference training (chosen and rejected rows, a reference model) is not modelled");
  f.known({"base_model_config",
           "model_type",
           "tokenizer_type",
           "tokenizer_config",
           "strict",
           "datasets",
           "test_datasets",
           "dataset_prepared_path",
           "val_set_size",
           "output_dir",
           "sample_packing",
           "eval_sample_packing",
           "pad_to_sequence_len",
           "lora_model_dir",
           "lora_alpha",
           "lora_fan_in_fan_out",
           "wandb_project",
           "wandb_entity",
           "wandb_watch",
           "wandb_name",
           "wandb_log_model",
           "num_epochs",
           "max_steps",
           "lr_scheduler",
           "learning_rate",
           "tf32",
           "gradient_checkpointing_kwargs",
           "resume_from_checkpoint",
           "logging_steps",
           "warmup_steps",
           "warmup_ratio",
           "evals_per_epoch",
           "eval_steps",
           "saves_per_epoch",
           "save_steps",
           "weight_decay",
           "special_tokens",
           "tokens",
           "chat_template",
           "hub_model_id",
           "train_on_inputs",
           "group_by_length",
           "local_rank",
           "seed",
           "debug",
           "early_stopping_patience",
           "save_total_limit",
           "trust_remote_code",
           "fsdp_config",
           "plugins",
           "fsdp_version",
           "dataset_processes",
           "shuffle_merged_datasets",
           "lora_on_cpu",
           "max_grad_norm",
           "logging_first_step",
           "save_strategy",
           "eval_strategy"});
  f.finish();
}

}  // namespace memplan::cli
