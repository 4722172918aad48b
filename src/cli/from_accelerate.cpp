// --from: an accelerate config YAML (accelerate config / default_config.yaml): the processes, the
// mixed precision and the FSDP or DeepSpeed block.
#include <string>

#include "cli/from_config.hpp"
#include "cli/from_fields.hpp"

namespace memplan::cli {

namespace {

void accelerate_fsdp(FromFields& f) {
  const std::string path = "fsdp_config.fsdp_sharding_strategy";
  const ConfigNode* n = f.get(path);
  std::string mode = "full-shard";
  if (n) {
    const std::string s = f.text(path, *n);  // a name, or accelerate's older numbers 1-4
    mode = s == "FULL_SHARD" || s == "1"      ? "full-shard"
           : s == "SHARD_GRAD_OP" || s == "2" ? "shard-grad-op"
           : s == "NO_SHARD" || s == "3"      ? "no-shard"
           : s == "HYBRID_SHARD" || s == "4"  ? "hybrid-shard"
                                              : "";
    if (mode.empty())
      f.fail(path, *n, "\"" + s + "\" is not FULL_SHARD, SHARD_GRAD_OP, NO_SHARD or HYBRID_SHARD");
  } else if (const ConfigNode* v2 = f.get("fsdp_config.fsdp_reshard_after_forward")) {
    mode = f.boolean("fsdp_config.fsdp_reshard_after_forward", *v2) ? "full-shard" : "shard-grad-op";
    f.use("fsdp_config.fsdp_reshard_after_forward", v2, Field::fsdp, mode, "FSDP2");
    n = nullptr;
  }
  if (!f.get("fsdp_config.fsdp_reshard_after_forward") || n)
    f.use(n ? path : "distributed_type", n ? n : f.get("distributed_type"), Field::fsdp, mode,
          n ? "" : "FSDP's default sharding");
  if (const ConfigNode* o = f.get("fsdp_config.fsdp_offload_params");
      o && f.boolean("fsdp_config.fsdp_offload_params", *o))
    f.use("fsdp_config.fsdp_offload_params", o, Field::offload, "parameters");
}

void accelerate_deepspeed(FromFields& f) {
  if (const ConfigNode* n = f.get("deepspeed_config.zero_stage"))
    f.use("deepspeed_config.zero_stage", n, Field::zero, f.text("deepspeed_config.zero_stage", *n));
  const ConfigNode* param = f.get("deepspeed_config.offload_param_device");
  const ConfigNode* optim = f.get("deepspeed_config.offload_optimizer_device");
  if (param && f.text("deepspeed_config.offload_param_device", *param) != "none")
    f.use("deepspeed_config.offload_param_device", param, Field::offload, "parameters");
  else if (optim && f.text("deepspeed_config.offload_optimizer_device", *optim) != "none")
    f.use("deepspeed_config.offload_optimizer_device", optim, Field::offload, "optimizer");
  if (const ConfigNode* n = f.get("deepspeed_config.gradient_accumulation_steps"))
    f.use("deepspeed_config.gradient_accumulation_steps", n, Field::grad_accum,
          f.text("deepspeed_config.gradient_accumulation_steps", *n));
  if (const ConfigNode* n = f.get("deepspeed_config.deepspeed_config_file"))
    f.not_modelled("deepspeed_config.deepspeed_config_file",
                   f.text("deepspeed_config.deepspeed_config_file", *n),
                   "a DeepSpeed JSON: read it with its own --from");
}

}  // namespace

void read_accelerate(const ConfigNode& root, FromReport& r) {
  FromFields f(root, r);
  const ConfigNode* type = f.get("distributed_type");
  if (!type)  // "distributed_type:" with no value (found by fuzz_from_config)
    f.fail("distributed_type", *root.find("distributed_type"),
           "is empty (expected NO, MULTI_GPU, FSDP, DEEPSPEED or another accelerate distributed type)");
  const std::string kind = f.text("distributed_type", *type);
  if (kind == "FSDP")
    accelerate_fsdp(f);
  else if (kind == "DEEPSPEED")
    accelerate_deepspeed(f);
  else if (kind != "NO" && kind != "MULTI_GPU")
    f.not_modelled("distributed_type", kind, "a backend memplan does not plan for (it plans CUDA GPUs)");
  if (const ConfigNode* n = f.get("num_processes"))
    f.use("num_processes", n, Field::gpus, f.text("num_processes", *n), "the GPUs of all nodes");
  if (const ConfigNode* n = f.get("num_machines"))
    f.use("num_machines", n, Field::nodes, f.text("num_machines", *n));
  if (const ConfigNode* n = f.get("mixed_precision")) {
    const std::string m = f.text("mixed_precision", *n);
    const char* recipe = m == "bf16" ? "amp-bf16" : m == "fp16" ? "amp-fp16" : m == "no" ? "fp32" : nullptr;
    if (!recipe)
      f.not_modelled("mixed_precision", m, "a format memplan does not model: give --precision");
    else
      f.use("mixed_precision", n, Field::precision, recipe, "autocast over fp32 weights");
  }
  f.known({"compute_environment", "debug", "downcast_bf16", "fsdp_config", "deepspeed_config", "machine_rank",
           "main_training_function", "rdzv_backend", "same_network", "tpu_env", "tpu_use_cluster",
           "tpu_use_sudo", "use_cpu", "gpu_ids", "main_process_ip", "main_process_port",
           "enable_cpu_affinity", "dynamo_config"});
  f.finish();
}

}  // namespace memplan::cli
