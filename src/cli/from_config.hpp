#pragma once
// --from FILE: the configuration a user already has (a DeepSpeed JSON, an Axolotl or LLaMA-Factory
// YAML, ...) read into plan values, with every field it used, each field that changes memory but
// that memplan does not model, and the keys it did not read. One reader per framework
// (from_<framework>.cpp); flags given beside --from override its values (plan_options.cpp).

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/config_node.hpp"

namespace memplan::cli {

struct FromField {
  std::string field;   // the file's key path: "zero_optimization.stage"
  std::string value;   // as written ("" for a default the framework applies)
  std::string option;  // the memplan flag it sets ("--zero"), "" when not modelled
  std::string note;    // how it was read, or why it is not modelled
};

struct FromReport {
  std::string path;
  std::string framework;                      // "deepspeed", "axolotl", ...
  std::map<std::string, std::string> values;  // plan keys -> text, for RawPlan
  std::vector<FromField> used;
  std::vector<FromField> not_modelled;
  std::vector<std::string> not_read;    // keys the reader does not know
  std::vector<std::string> overridden;  // filled by resolve_plan: flags that replaced a value
  std::vector<std::string> notes;       // what the file leaves to flags ("names no model")
};

// Reads FILE, finds its framework from its keys and reads it. Throws Error (file, line and column
// for YAML) on bad input.
FromReport read_from_file(const std::string& path);
// The same for a file's text (`path` names it in errors; a DeepSpeed path it holds is read beside it).
FromReport read_from_text(std::string_view text, const std::string& path);

// The report as the JSON output's "from" section and as text lines.
nlohmann::json from_json(const FromReport& r);
std::string from_text(const FromReport& r);

// The readers, on a parsed document (from_<framework>.cpp).
void read_deepspeed(const ConfigNode& root, FromReport& r, const std::string& prefix = "");
void read_axolotl(const ConfigNode& root, FromReport& r);
void read_llamafactory(const ConfigNode& root, FromReport& r);
void read_torchtune(const ConfigNode& root, FromReport& r);
void read_accelerate(const ConfigNode& root, FromReport& r);
void read_trainer(const ConfigNode& root, FromReport& r);

// The TrainingArguments / SFTConfig keys that change no memory or that read_trainer reads.
const std::vector<const char*>& trainer_known_keys();

}  // namespace memplan::cli
