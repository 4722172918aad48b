// The TrainingArguments, SFTConfig, ModelConfig and script keys that change no GPU memory (logging,
// data, schedules, the Hub), or that from_trainer.cpp reads: a dump holds ~150 keys, and only the
// ones named nowhere are listed as not read.
#include "cli/from_config.hpp"

namespace memplan::cli {

const std::vector<const char*>& trainer_known_keys() {
  static const std::vector<const char*> k_keys = {
      // transformers TrainingArguments (training_args.py)
      "output_dir", "overwrite_output_dir", "do_train", "do_eval", "do_predict", "eval_strategy",
      "evaluation_strategy", "prediction_loss_only", "per_device_eval_batch_size", "per_gpu_train_batch_size",
      "per_gpu_eval_batch_size", "eval_accumulation_steps", "eval_delay", "learning_rate", "weight_decay",
      "adam_beta1", "adam_beta2", "adam_epsilon", "max_grad_norm", "num_train_epochs", "max_steps",
      "lr_scheduler_type", "lr_scheduler_kwargs", "warmup_ratio", "warmup_steps", "log_level",
      "log_level_replica", "log_on_each_node", "logging_dir", "logging_strategy", "logging_first_step",
      "logging_steps", "logging_nan_inf_filter", "save_strategy", "save_steps", "save_total_limit",
      "save_safetensors", "save_on_each_node", "save_only_model", "restore_callback_states_from_checkpoint",
      "no_cuda", "use_cpu", "use_mps_device", "seed", "data_seed", "jit_mode_eval", "use_ipex",
      "bf16_full_eval", "fp16_full_eval", "fp16_opt_level", "half_precision_backend", "tf32", "local_rank",
      "ddp_backend", "tpu_num_cores", "tpu_metrics_debug", "debug", "dataloader_drop_last", "eval_steps",
      "dataloader_num_workers", "dataloader_prefetch_factor", "past_index", "run_name", "disable_tqdm",
      "remove_unused_columns", "label_names", "load_best_model_at_end", "metric_for_best_model",
      "greater_is_better", "ignore_data_skip", "fsdp_min_num_params", "fsdp_config",
      "fsdp_transformer_layer_cls_to_wrap", "accelerator_config", "parallelism_config",
      "label_smoothing_factor", "optim_args", "group_by_length", "length_column_name", "report_to", "project",
      "trackio_space_id", "ddp_find_unused_parameters", "ddp_broadcast_buffers", "dataloader_pin_memory",
      "dataloader_persistent_workers", "skip_memory_metrics", "use_legacy_prediction_loop", "push_to_hub",
      "resume_from_checkpoint", "hub_model_id", "hub_strategy", "hub_token", "hub_private_repo",
      "hub_always_push", "hub_revision", "gradient_checkpointing_kwargs", "include_inputs_for_metrics",
      "include_for_metrics", "eval_do_concat_batches", "fp16_backend", "push_to_hub_model_id",
      "push_to_hub_organization", "push_to_hub_token", "mp_parameters", "full_determinism", "torchdynamo",
      "ray_scope", "ddp_timeout", "torch_compile_backend", "torch_compile_mode", "include_tokens_per_second",
      "include_num_input_tokens_seen", "neftune_noise_alpha", "optim_target_modules", "batch_eval_metrics",
      "eval_on_start", "eval_use_gather_object", "average_tokens_across_devices", "liger_kernel_config",
      "dispatch_batches", "split_batches", "sortish_sampler", "predict_with_generate",
      "generation_max_length", "generation_num_beams", "generation_config", "_n_gpu", "deepspeed_plugin",
      // TRL's SFTConfig, ModelConfig and script arguments (sft_config.py, model_config.py, scripts/utils.py)
      "model_init_kwargs", "router_aux_loss_coef", "chat_template_path", "dataset_text_field",
      "dataset_kwargs", "dataset_num_proc", "eos_token", "pad_token", "truncation_mode", "shuffle_dataset",
      "packing", "packing_strategy", "padding_free", "pad_to_multiple_of", "eval_packing",
      "completion_only_loss", "assistant_only_loss", "loss_type", "dataset_batch_size", "num_of_sequences",
      "chars_per_token", "use_liger", "model_revision", "trust_remote_code", "lora_alpha",
      "lora_target_parameters", "lora_task_type", "use_rslora", "bnb_4bit_quant_type", "use_bnb_nested_quant",
      "dataset_name", "dataset_config", "dataset_train_split", "dataset_test_split", "dataset_streaming",
      "ignore_bias_buffers", "gradient_checkpointing_use_reentrant", "datasets", "dataset_mixture",
      "chat_template", "tokenizer_name_or_path", "preprocessing_num_workers", "max_train_samples",
      "max_eval_samples", "train_file", "validation_file", "test_file", "overwrite_cache", "cache_dir",
      "model_type", "config_name", "tokenizer_name", "use_fast_tokenizer", "use_auth_token", "token",
      "source_prefix", "text_column", "summary_column", "max_source_length", "max_target_length",
      "val_max_target_length", "pad_to_max_length", "ignore_pad_token_for_loss", "num_beams",
      "dataset_config_name", "block_size", "validation_split_percentage", "keep_linebreaks", "streaming",
      "low_cpu_mem_usage", "use_flash_attention_2", "system_prompt",
      // read by from_trainer.cpp
      "bf16", "fp16", "dtype", "torch_dtype", "use_peft", "lora_r", "lora_target_modules", "lora_dropout",
      "lora_modules_to_save", "use_dora", "load_in_4bit", "load_in_8bit", "max_length", "max_seq_length",
      "per_device_train_batch_size", "gradient_accumulation_steps", "gradient_checkpointing", "optim",
      "adafactor", "attn_implementation", "use_liger_kernel", "fsdp", "deepspeed", "torch_compile",
      "auto_find_batch_size", "model_name_or_path", "activation_offloading", "torch_empty_cache_steps",
      "ddp_bucket_cap_mb"};
  return k_keys;
}

}  // namespace memplan::cli
