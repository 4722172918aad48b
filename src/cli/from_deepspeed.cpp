// --from: a DeepSpeed config JSON (ds_config.json): ZeRO stage, offload, bf16/fp16, micro-batch.
#include "cli/from_config.hpp"
#include "cli/from_fields.hpp"
#include "cli/options.hpp"

namespace memplan::cli {

namespace {

// "auto" leaves the value to the trainer that launches DeepSpeed (transformers fills it in).
void deepspeed_value(FromFields& f, const std::string& path, Field field) {
  const ConfigNode* n = f.get(path);
  if (!n) return;
  if (f.is_auto(*n)) {
    f.not_modelled(path, "auto", "set by the trainer that launches DeepSpeed: give " + flag_for(field));
    return;
  }
  f.use(path, n, field, f.text(path, *n));
}

void deepspeed_offload(FromFields& f, const std::string& path, const char* what) {
  const ConfigNode* n = f.get(path + ".device");
  if (!n) return;
  const std::string device = f.text(path + ".device", *n);
  if (device == "none") return;
  if (device != "cpu" && device != "nvme")
    f.fail(path + ".device", *n, "\"" + device + "\" is not none, cpu or nvme");
  f.use(path + ".device", n, Field::offload, what,
        device == "nvme" ? "NVMe offload counted as host offload: the GPU holds the same" : "");
}

}  // namespace

void read_deepspeed(const ConfigNode& root, FromReport& r, const std::string& prefix) {
  FromFields f(root, r, prefix);
  if (const ConfigNode* n = f.get("zero_optimization.stage"))
    f.use("zero_optimization.stage", n, Field::zero, f.text("zero_optimization.stage", *n));
  deepspeed_offload(f, "zero_optimization.offload_param", "parameters");
  if (!r.values.count("offload"))
    deepspeed_offload(f, "zero_optimization.offload_optimizer", "optimizer");
  else if (f.get("zero_optimization.offload_optimizer.device"))
    f.not_modelled("zero_optimization.offload_optimizer.device", "",
                   "offload_param already moves the optimizer too");
  for (const char* bucket :
       {"reduce_bucket_size", "allgather_bucket_size", "stage3_prefetch_bucket_size",
        "stage3_max_live_parameters", "stage3_param_persistence_threshold", "sub_group_size"}) {
    const std::string path = std::string("zero_optimization.") + bucket;
    if (const ConfigNode* n = f.get(path); n && !f.is_auto(*n))
      f.not_modelled(path, f.text(path, *n), "DeepSpeed's communication and gather buffers are not counted");
  }
  bool bf16 = false, fp16 = false;
  for (const char* block : {"bf16", "fp16"}) {
    const std::string path = std::string(block) + ".enabled";
    const ConfigNode* n = f.get(path);
    if (!n) continue;
    if (f.is_auto(*n)) {
      f.not_modelled(path, "auto", "set by the trainer that launches DeepSpeed: give --precision");
      continue;
    }
    if (f.boolean(path, *n)) (std::string(block) == "bf16" ? bf16 : fp16) = true;
  }
  if (bf16 && fp16) f.fail("fp16.enabled", *f.get("fp16.enabled"), "bf16 and fp16 cannot both be enabled");
  if (bf16)
    f.use("bf16.enabled", f.get("bf16.enabled"), Field::precision, "mixed-bf16",
          "bf16 weights, fp32 master copy");
  if (fp16)
    f.use("fp16.enabled", f.get("fp16.enabled"), Field::precision, "mixed-fp16",
          "fp16 weights, fp32 master copy");
  deepspeed_value(f, "train_micro_batch_size_per_gpu", Field::batch);
  deepspeed_value(f, "gradient_accumulation_steps", Field::grad_accum);
  f.use_optimizer("optimizer.type");
  if (const ConfigNode* n = f.get("train_batch_size"); n && !f.is_auto(*n))
    f.not_modelled("train_batch_size", f.text("train_batch_size", *n),
                   "micro-batch x accumulation x data-parallel GPUs: give --gpus for the world size");
  if (f.get("activation_checkpointing"))
    f.not_modelled("activation_checkpointing", "",
                   "DeepSpeed's own checkpointing (Megatron models): give --checkpointing");
  f.known({"zero_allow_untested_optimizer", "gradient_clipping", "steps_per_print", "wall_clock_breakdown",
           "scheduler", "optimizer", "prescale_gradients", "communication_data_type", "flops_profiler",
           "tensorboard", "wandb", "csv_monitor", "comms_logger", "zero_force_ds_cpu_optimizer"});
  f.finish();
}

}  // namespace memplan::cli
