#pragma once
// Internal to the --from readers: reading one document's fields into a FromReport, with errors
// that name the file, the line and column (YAML) and the key.

#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <memplan/error.hpp>

#include "cli/config_node.hpp"
#include "cli/from_config.hpp"

namespace memplan::cli {

class FromFields {
 public:
  // `prefix` is put before every key path (a DeepSpeed file named by a YAML: "deepspeed:").
  FromFields(const ConfigNode& root, FromReport& report, std::string prefix = "");

  // The node at a dotted path ("zero_optimization.stage"), nullptr when absent or null. Marks the
  // top-level key as read.
  const ConfigNode* get(const std::string& path);
  // A scalar's text, or an Error naming the key when the node is a list or mapping.
  std::string text(const std::string& path, const ConfigNode& n);
  // true/false (YAML's True/yes/... too), or an Error.
  bool boolean(const std::string& path, const ConfigNode& n);
  bool is_auto(const ConfigNode& n) const { return n.kind == ConfigNode::Kind::scalar && n.text == "auto"; }

  // Sets plan option `field` to `value` (checked by the option's own rule; an Error names the key
  // and its line), read from `path` = `written`.
  void use(const std::string& path, const ConfigNode* n, Field field, const std::string& value,
           const std::string& note = "");
  // The model named by the Hub id at `path` (a preset when one has that repo), when present.
  void use_model(const std::string& path);
  // The optimizer named at `path` in transformers' spelling (adamw_torch, paged_adamw_32bit, ...),
  // or a not-modelled line when memplan does not know it; nothing when absent.
  void use_optimizer(const std::string& path);
  // A field that changes memory that memplan does not model.
  void not_modelled(const std::string& path, const std::string& written, const std::string& why);
  // Keys read elsewhere, or known to change no memory (logging, data, schedules).
  void known(std::initializer_list<const char*> keys);
  void known(const std::vector<const char*>& keys);
  // Lists the top-level keys nothing read as not_read.
  void finish();

  [[noreturn]] void fail(const std::string& path, const ConfigNode& n, const std::string& message) const;
  const std::string& file() const { return report_.path; }

 private:
  const ConfigNode& root_;
  FromReport& report_;
  std::string prefix_;
  std::set<std::string> read_;
};

// The memplan optimizer for a transformers / bitsandbytes optimizer name ("adamw_torch_fused",
// "paged_adamw_8bit"), or nullopt.
std::optional<std::string> optimizer_for_hf_name(const std::string& name);

// A scalar, or a list of scalars joined with commas ("q_proj,v_proj"): --lora-targets takes the
// module names as they are.
std::string joined_names(FromFields& f, const std::string& path, const ConfigNode& n);

// The memplan model preset whose Hugging Face repository is `repo`, or has its name under another
// organisation (a mirror: NousResearch/Meta-Llama-3-8B); else `repo` itself (the hub id). `note`
// tells which.
std::string model_for_repo(const std::string& repo, std::string& note);

}  // namespace memplan::cli
