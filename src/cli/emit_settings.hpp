#pragma once
// Internal to --emit: a run (EstimateRequest) as one framework's settings. Each framework has one
// function (emit_<framework>.cpp) that writes the keys it can express, with the very names its
// --from reader reads back, and says in `cannot` each knob of the run it cannot express.
// emit_config.cpp compares the run as given with the chosen plan and renders the difference.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memplan/estimate.hpp>

#include "cli/from_config.hpp"

namespace memplan::cli {

// One key: a dotted path ("fsdp_config.fsdp_sharding_strategy", "model.lora_rank"; a flag
// "--batch" for command lines) and its value (a number, true/false, a string or a list).
struct EmitSetting {
  std::string key;
  nlohmann::json value;
};

struct EmitSettings {
  std::vector<EmitSetting> keys;
  std::vector<std::string> cannot;  // "selective checkpointing: axolotl has ... (full emitted)"
  std::vector<std::string> launch;  // what is not a key of the file: "launch on 4 GPUs: ..."

  void set(std::string key, nlohmann::json value) { keys.push_back({std::move(key), std::move(value)}); }
};

// The run as each framework's keys; `from` is the --from report when its framework is this one
// (its model builder, its file's keys), else nullptr.
EmitSettings axolotl_settings(const EstimateRequest& r, const FromReport* from);
EmitSettings llamafactory_settings(const EstimateRequest& r, const FromReport* from);
EmitSettings torchtune_settings(const EstimateRequest& r, const FromReport* from);
EmitSettings accelerate_settings(const EstimateRequest& r, const FromReport* from);
EmitSettings deepspeed_settings(const EstimateRequest& r, const FromReport* from);
EmitSettings trainer_settings(const EstimateRequest& r, const FromReport* from);
EmitSettings flags_settings(const EstimateRequest& r, const FromReport* from);

// Shared by the Hugging Face based frameworks (emit_hf_names.cpp).
// transformers' --optim name for a memplan optimizer ("adamw-8bit" -> "adamw_bnb_8bit"), "" if none.
std::string hf_optimizer_name(const std::string& memplan_optimizer);
// The adapted modules by their Hugging Face names: ["q_proj", "v_proj"].
std::vector<std::string> hf_lora_modules(const LoraTargets& t);
// Every linear layer of the blocks (q, k, v, o, gate, up, down).
bool lora_on_all_linear(const LoraTargets& t);
// The GPU count and sharding of a run with several GPUs ("4 GPUs (zero-3)"), "" on one.
std::string gpus_text(const EstimateRequest& r);

}  // namespace memplan::cli
