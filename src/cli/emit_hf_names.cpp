// --emit: the names the Hugging Face based frameworks (transformers, Axolotl, LLaMA-Factory) give
// memplan's optimizers and LoRA targets, the inverse of the --from readers' tables.
#include <utility>

#include <memplan/sharding.hpp>

#include "cli/emit_settings.hpp"
#include "cli/from_fields.hpp"

namespace memplan::cli {

std::string hf_optimizer_name(const std::string& memplan_optimizer) {
  // transformers' OptimizerNames (training_args.py); each reads back through optimizer_for_hf_name.
  static const std::pair<const char*, const char*> k_names[] = {
      {"adamw", "adamw_torch"},
      {"adamw-hf", "adamw_hf"},
      {"adamw-8bit", "adamw_bnb_8bit"},
      {"paged-adamw-8bit", "paged_adamw_8bit"},
      {"paged-adamw", "paged_adamw_32bit"},
      {"adafactor", "adafactor"},
      {"sgd", "sgd"},
      {"adagrad", "adagrad"},
      {"rmsprop", "rmsprop"},
      {"lion", "lion_32bit"},
  };
  for (const auto& [ours, hf] : k_names)
    if (memplan_optimizer == ours && optimizer_for_hf_name(hf) == std::string(ours)) return hf;
  return "";
}

std::vector<std::string> hf_lora_modules(const LoraTargets& t) {
  std::vector<std::string> out;
  const std::pair<bool, const char*> names[] = {
      {t.q, "q_proj"},       {t.k, "k_proj"},   {t.v, "v_proj"},      {t.o, "o_proj"},
      {t.gate, "gate_proj"}, {t.up, "up_proj"}, {t.down, "down_proj"}};
  for (const auto& [on, name] : names)
    if (on) out.emplace_back(name);
  return out;
}

bool lora_on_all_linear(const LoraTargets& t) { return t.q && t.k && t.v && t.o && t.gate && t.up && t.down; }

std::string gpus_text(const EstimateRequest& r) {
  if (!r.parallel || r.parallel->gpus < 2) return "";
  return std::to_string(r.parallel->gpus) + " GPUs (" + sharding_name(r.parallel->sharding) + ")";
}

}  // namespace memplan::cli
