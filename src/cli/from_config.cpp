#include "cli/from_config.hpp"

#include <memplan/error.hpp>
#include "core/base/file_reader.hpp"
#include "core/base/json_text.hpp"
#include "core/base/terminal_text.hpp"

namespace memplan::cli {

namespace {

bool looks_like_json(std::string_view text) {
  for (const char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{' || c == '[';
  }
  return false;
}

bool has_key(const ConfigNode& root, const char* key) { return root.find(key) != nullptr; }

bool has_any(const ConfigNode& root, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (has_key(root, k)) return true;
  return false;
}

// LLaMA-Factory's own keys: its YAML shares model_name_or_path and the trainer's keys with TRL's.
bool looks_like_llamafactory(const ConfigNode& root) {
  return has_key(root, "model_name_or_path") &&
         has_any(root,
                 {"stage", "finetuning_type", "template", "cutoff_len", "lora_target", "quantization_bit"});
}

// TrainingArguments' keys (a dump holds them all; a TRL YAML or an HfArgumentParser JSON some).
bool looks_like_trainer(const ConfigNode& root) {
  return has_any(root, {"per_device_train_batch_size", "output_dir", "per_device_eval_batch_size",
                        "num_train_epochs", "optim", "gradient_checkpointing", "model_name_or_path"});
}

}  // namespace

FromReport read_from_file(const std::string& path) {
  return read_from_text(read_small_file(path, config_limit::k_file, "--from"), path);
}

FromReport read_from_text(std::string_view text, const std::string& path) {
  FromReport r;
  r.path = path;
  const bool json = looks_like_json(text);
  const ConfigNode root = json ? parse_json_config(text, path) : parse_yaml_config(text, path);
  if (root.kind != ConfigNode::Kind::map)
    throw Error(config_where(path, root),
                "is not a mapping of keys to values (expected a training configuration)");
  if (json && (has_key(root, "zero_optimization") || has_key(root, "train_micro_batch_size_per_gpu") ||
               has_key(root, "train_batch_size"))) {
    r.framework = "deepspeed";
    read_deepspeed(root, r);
  } else if (!json && has_key(root, "base_model")) {
    r.framework = "axolotl";
    read_axolotl(root, r);
  } else if (const ConfigNode* model = root.find("model");
             !json && model && model->find("_component_") &&
             model->find("_component_")->text.rfind("torchtune.", 0) == 0) {
    r.framework = "torchtune";
    read_torchtune(root, r);
  } else if (!json && has_key(root, "distributed_type")) {
    r.framework = "accelerate";
    read_accelerate(root, r);
  } else if (!json && looks_like_llamafactory(root)) {
    r.framework = "llamafactory";
    read_llamafactory(root, r);
  } else if (looks_like_trainer(root)) {
    r.framework = "trainer";
    read_trainer(root, r);
  } else {
    throw Error(
        path,
        std::string("is not a configuration memplan reads (expected ") +
            (json
                 ? "a DeepSpeed JSON with zero_optimization or train_micro_batch_size_per_gpu, or "
                   "TrainingArguments with per_device_train_batch_size or output_dir"
                 : "an Axolotl YAML with base_model, a LLaMA-Factory YAML with model_name_or_path and stage, "
                   "a "
                   "torchtune recipe with model._component_, an accelerate config with distributed_type or a "
                   "TRL YAML with per_device_train_batch_size") +
            ")");
  }
  // The framework that runs such a file runs the step: its profile's defaults apply where the file
  // is silent (framework_profile.hpp). DeepSpeed and accelerate configs say nothing of the loop, and
  // a TrainingArguments file may be Trainer's or TRL's (its keys do not say which).
  if (r.framework == "axolotl" || r.framework == "torchtune" || r.framework == "llamafactory")
    r.values.emplace("framework", r.framework);
  return r;
}

nlohmann::json from_json(const FromReport& r) {
  using nlohmann::json;
  // The file's bytes as printable ASCII (\xHH): valid JSON whatever the file held.
  const auto safe = [](const std::string& t) { return memplan::detail::printable(t, 1000); };
  json used = json::array(), not_modelled = json::array(), not_read = json::array(),
       overridden = json::array();
  for (const FromField& u : r.used)
    used.push_back({{"field", safe(u.field)},
                    {"value", safe(u.value)},
                    {"option", safe(u.option)},
                    {"note", safe(u.note)}});
  for (const FromField& u : r.not_modelled)
    not_modelled.push_back({{"field", safe(u.field)}, {"value", safe(u.value)}, {"why", safe(u.note)}});
  for (const std::string& k : r.not_read) not_read.push_back(safe(k));
  for (const std::string& o : r.overridden) overridden.push_back(safe(o));
  json doc = {{"file", safe(r.path)},         {"framework", r.framework}, {"used", used},
              {"not_modelled", not_modelled}, {"not_read", not_read},     {"overridden", overridden}};
  if (!r.notes.empty()) {
    json notes = json::array();
    for (const std::string& n : r.notes) notes.push_back(safe(n));
    doc["notes"] = notes;
  }
  return doc;
}

std::string from_text(const FromReport& r) {
  std::string s = "inputs from " + terminal_field(r.path) + " (" + r.framework + "):\n";
  for (const FromField& u : r.used)
    s += "  " + terminal_field(u.field) + (u.value.empty() ? " (not set)" : " = " + terminal_field(u.value)) +
         " -> " + terminal_field(u.option) +
         (u.note.empty() ? "" : " (" + terminal_field(u.note, 400) + ")") + "\n";
  for (const std::string& o : r.overridden) s += "  overridden: " + terminal_field(o, 400) + "\n";
  for (const std::string& n : r.notes) s += "  note: " + terminal_field(n, 1000) + "\n";
  for (const FromField& u : r.not_modelled)
    s += "  not modelled: " + terminal_field(u.field) +
         (u.value.empty() ? "" : " = " + terminal_field(u.value)) + ": " + terminal_field(u.note, 400) + "\n";
  if (!r.not_read.empty()) {
    std::string keys;
    for (const std::string& k : r.not_read) keys += (keys.empty() ? "" : ", ") + terminal_field(k);
    s += "  not read: " + keys + "\n";
  }
  return s + "\n";
}

}  // namespace memplan::cli
