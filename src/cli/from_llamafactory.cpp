// --from: a LLaMA-Factory training YAML (model_name_or_path, finetuning_type, lora_rank, cutoff_len,
// per_device_train_batch_size, ...); the defaults it applies when a key is absent are named so.
#include "cli/from_config.hpp"
#include "cli/from_fields.hpp"

namespace memplan::cli {

void read_llamafactory(const ConfigNode& root, FromReport& r) {
  FromFields f(root, r);
  f.use_model("model_name_or_path");
  const ConfigNode* type = f.get("finetuning_type");
  const std::string kind = type ? f.text("finetuning_type", *type) : "lora";  // LLaMA-Factory's default
  if (kind == "lora") {
    const ConfigNode* rank = f.get("lora_rank");
    f.use("lora_rank", rank, Field::lora, rank ? f.text("lora_rank", *rank) : "8",
          rank ? "" : "LLaMA-Factory's default");
    const ConfigNode* target = f.get("lora_target");
    f.use("lora_target", target, Field::lora_targets,
          target ? joined_names(f, "lora_target", *target) : "all", target ? "" : "LLaMA-Factory's default");
    if (const ConfigNode* n = f.get("lora_dropout"))
      f.use("lora_dropout", n, Field::lora_dropout, f.text("lora_dropout", *n));
    if (const ConfigNode* n = f.get("additional_target"))
      f.not_modelled("additional_target", joined_names(f, "additional_target", *n),
                     "these modules train in full beside the adapters");
  } else if (kind == "freeze") {
    f.not_modelled("finetuning_type", kind, "freeze tuning trains some layers: give --trainable");
  } else if (kind != "full") {
    f.fail("finetuning_type", *type, "\"" + kind + "\" is not lora, full or freeze");
  }
  if (const ConfigNode* n = f.get("quantization_bit")) {
    const std::string bits = f.text("quantization_bit", *n);
    if (bits == "4") {
      const ConfigNode* dq = f.get("double_quantization");
      const bool double_q = !dq || f.boolean("double_quantization", *dq);  // default true
      f.use("quantization_bit", n, Field::quantize, double_q ? "nf4-dq" : "nf4", "bitsandbytes nf4");
    } else if (bits == "8") {
      f.use("quantization_bit", n, Field::quantize, "int8", "bitsandbytes LLM.int8()");
    } else {
      f.fail("quantization_bit", *n, "\"" + bits + "\" is not 4 or 8");
    }
  }
  const ConfigNode* cutoff = f.get("cutoff_len");
  f.use("cutoff_len", cutoff, Field::seq, cutoff ? f.text("cutoff_len", *cutoff) : "2048",
        cutoff ? "" : "LLaMA-Factory's default");
  const ConfigNode* batch = f.get("per_device_train_batch_size");
  f.use("per_device_train_batch_size", batch, Field::batch,
        batch ? f.text("per_device_train_batch_size", *batch) : "8", batch ? "" : "transformers' default");
  if (const ConfigNode* n = f.get("gradient_accumulation_steps"))
    f.use("gradient_accumulation_steps", n, Field::grad_accum, f.text("gradient_accumulation_steps", *n));
  // LLaMA-Factory loads the weights in the compute dtype (bf16 or fp16).
  const ConfigNode* bf16 = f.get("bf16");
  const ConfigNode* pure = f.get("pure_bf16");
  const ConfigNode* fp16 = f.get("fp16");
  if ((pure && f.boolean("pure_bf16", *pure)) || (bf16 && f.boolean("bf16", *bf16)))
    f.use(pure && f.boolean("pure_bf16", *pure) ? "pure_bf16" : "bf16",
          pure && f.boolean("pure_bf16", *pure) ? pure : bf16, Field::precision, "bf16",
          "weights loaded in bf16");
  else if (fp16 && f.boolean("fp16", *fp16))
    f.use("fp16", fp16, Field::precision, "fp16", "weights loaded in fp16");
  const ConfigNode* no_ckpt = f.get("disable_gradient_checkpointing");
  if (!no_ckpt || !f.boolean("disable_gradient_checkpointing", *no_ckpt))
    f.use("disable_gradient_checkpointing", no_ckpt, Field::checkpointing, "full",
          no_ckpt ? "" : "LLaMA-Factory checkpoints by default");
  f.use_optimizer("optim");
  if (const ConfigNode* n = f.get("flash_attn")) {
    const std::string a = f.text("flash_attn", *n);
    if (a == "disabled")
      f.use("flash_attn", n, Field::attention, "eager");
    else if (a == "sdpa" || a == "fa2" || a == "fa3")
      f.use("flash_attn", n, Field::attention, "sdpa", "fused attention");
  }
  if (const ConfigNode* n = f.get("enable_liger_kernel"); n && f.boolean("enable_liger_kernel", *n))
    f.use("enable_liger_kernel", n, Field::loss, "fused", "Liger's fused linear cross-entropy");
  if (const ConfigNode* n = f.get("stage")) {
    const std::string stage = f.text("stage", *n);
    if (stage != "sft" && stage != "pt")
      f.not_modelled(
          "stage", stage,
          "preference and RL stages (chosen and rejected rows, reference or value models) are not modelled");
  }
  if (const ConfigNode* n = f.get("deepspeed"))
    f.not_modelled("deepspeed", f.text("deepspeed", *n),
                   "a DeepSpeed config: read it with its own --from, or give --zero");
  f.known({"trust_remote_code",
           "do_train",
           "dataset",
           "eval_dataset",
           "template",
           "max_samples",
           "overwrite_cache",
           "preprocessing_num_workers",
           "dataloader_num_workers",
           "output_dir",
           "logging_steps",
           "save_steps",
           "plot_loss",
           "overwrite_output_dir",
           "save_only_model",
           "report_to",
           "learning_rate",
           "num_train_epochs",
           "lr_scheduler_type",
           "warmup_ratio",
           "warmup_steps",
           "ddp_timeout",
           "resume_from_checkpoint",
           "val_size",
           "per_device_eval_batch_size",
           "eval_strategy",
           "eval_steps",
           "pref_beta",
           "pref_loss",
           "lora_alpha",
           "max_steps",
           "seed",
           "run_name",
           "save_strategy",
           "logging_dir",
           "dataset_dir",
           "tokenized_path",
           "finetuning_type",
           "double_quantization",
           "quantization_method",
           "quantization_type",
           "packing",
           "neat_packing",
           "image_max_pixels",
           "video_max_pixels",
           "max_grad_norm",
           "weight_decay"});
  f.finish();
}

}  // namespace memplan::cli
