#include "cli/from_fields.hpp"

#include <algorithm>
#include <cctype>

#include <memplan/presets.hpp>

#include "cli/options.hpp"
#include "core/base/terminal_text.hpp"

namespace memplan::cli {

FromFields::FromFields(const ConfigNode& root, FromReport& report, std::string prefix)
    : root_(root), report_(report), prefix_(std::move(prefix)) {
  if (root.kind != ConfigNode::Kind::map)
    throw Error(config_where(report.path, root),
                "is not a mapping of keys to values (expected a configuration)");
}

const ConfigNode* FromFields::get(const std::string& path) {
  const ConfigNode* n = &root_;
  size_t start = 0;
  read_.insert(path.substr(0, path.find('.')));
  while (n) {
    const size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (n->kind != ConfigNode::Kind::map) return nullptr;
    n = n->find(key);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return n && n->kind != ConfigNode::Kind::null ? n : nullptr;
}

void FromFields::fail(const std::string& path, const ConfigNode& n, const std::string& message) const {
  throw Error(config_where(report_.path, n) + ": " + prefix_ + path, message);
}

std::string FromFields::text(const std::string& path, const ConfigNode& n) {
  if (n.kind != ConfigNode::Kind::scalar) fail(path, n, "must be a single value, not a list or mapping");
  return n.text;
}

bool FromFields::boolean(const std::string& path, const ConfigNode& n) {
  const std::string t = text(path, n);
  if (t == "true" || t == "True" || t == "TRUE" || t == "yes" || t == "Yes" || t == "on") return true;
  if (t == "false" || t == "False" || t == "FALSE" || t == "no" || t == "No" || t == "off") return false;
  fail(path, n, "\"" + terminal_field(t) + "\" is not true or false");
}

void FromFields::use(const std::string& path, const ConfigNode* n, Field field, const std::string& value,
                     const std::string& note) {
  const std::string key = field_key(field);
  if (const OptionSpec* option = option_for_key(key)) {
    PlanValues scratch;
    try {
      parse_option(*option, value, scratch);
    } catch (const Error& e) {
      const std::string why = with_flags(e.message());
      if (n) fail(path, *n, why + " (read as " + option->flag + ")");
      throw Error(report_.path + ": " + prefix_ + path, why + " (read as " + option->flag + ")");
    }
  }
  std::string written = n ? n->text : "";
  if (n && n->kind == ConfigNode::Kind::list)
    for (const ConfigNode& item : n->items) written += (written.empty() ? "" : ",") + item.text;
  report_.values[key] = value;
  report_.used.push_back({prefix_ + path, written, flag_for(field) + " " + value, note});
}

void FromFields::use_model(const std::string& path) {
  const ConfigNode* n = get(path);
  if (!n) return;
  std::string note;
  const std::string model = model_for_repo(text(path, *n), note);
  use(path, n, Field::model, model, note);
}

void FromFields::use_optimizer(const std::string& path) {
  const ConfigNode* n = get(path);
  if (!n) return;
  const std::string name = text(path, *n);
  if (const auto o = optimizer_for_hf_name(name))
    use(path, n, Field::optimizer, *o);
  else
    not_modelled(path, name, "an optimizer memplan does not know: give --optimizer");
}

void FromFields::not_modelled(const std::string& path, const std::string& written, const std::string& why) {
  report_.not_modelled.push_back({prefix_ + path, written, "", why});
}

void FromFields::known(std::initializer_list<const char*> keys) {
  for (const char* k : keys) read_.insert(k);
}

void FromFields::known(const std::vector<const char*>& keys) {
  for (const char* k : keys) read_.insert(k);
}

void FromFields::finish() {
  for (const auto& [key, value] : root_.entries)
    if (!read_.count(key)) report_.not_read.push_back(prefix_ + key);
}

std::optional<std::string> optimizer_for_hf_name(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  static const std::pair<const char*, const char*> k_names[] = {
      {"adamw_torch", "adamw"},
      {"adamw_torch_fused", "adamw"},
      {"adamw_torch_xla", "adamw"},
      {"adamw_apex_fused", "adamw"},
      {"adamw", "adamw"},
      {"adam", "adam"},
      {"adamw_hf", "adamw-hf"},
      {"adamw_bnb_8bit", "adamw-8bit"},
      {"adamw_8bit", "adamw-8bit"},
      {"bnb_8bit", "adamw-8bit"},
      {"paged_adamw_8bit", "paged-adamw-8bit"},
      {"paged_adamw_32bit", "paged-adamw"},
      {"paged_adamw", "paged-adamw"},
      {"adafactor", "adafactor"},
      {"sgd", "sgd"},
      {"adagrad", "adagrad"},
      {"rmsprop", "rmsprop"},
      {"lion_32bit", "lion"},
      {"lion", "lion"},
  };
  for (const auto& [from, to] : k_names)
    if (n == from) return std::string(to);
  return std::nullopt;
}

std::string joined_names(FromFields& f, const std::string& path, const ConfigNode& n) {
  if (n.kind != ConfigNode::Kind::list) return f.text(path, n);
  std::string out;
  for (const ConfigNode& item : n.items) out += (out.empty() ? "" : ",") + f.text(path, item);
  return out;
}

namespace {

std::string lowered(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

std::string model_for_repo(const std::string& repo, std::string& note) {
  const std::string want = lowered(repo);
  const std::string want_name = want.substr(want.find('/') + 1);
  for (const ModelPreset& p : builtin_presets().models) {
    if (p.model.hf_repo.empty()) continue;
    if (lowered(p.model.hf_repo) == want) {
      note = "preset " + p.model.id + " (its Hugging Face repository)";
      return p.model.id;
    }
  }
  for (const ModelPreset& p : builtin_presets().models) {
    if (p.model.hf_repo.empty()) continue;
    const std::string have = lowered(p.model.hf_repo);
    if (want.find('/') != std::string::npos && have.substr(have.find('/') + 1) == want_name) {
      note = "preset " + p.model.id + " (a copy of " + p.model.hf_repo + ", same name)";
      return p.model.id;
    }
  }
  note = "a Hugging Face model id (read from the cache or the Hub)";
  return repo;
}

}  // namespace memplan::cli
