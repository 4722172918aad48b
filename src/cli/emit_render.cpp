#include "cli/emit_render.hpp"

#include <algorithm>
#include <cctype>

#include <memplan/error.hpp>

#include "core/base/file_reader.hpp"
#include "core/base/terminal_text.hpp"

namespace memplan::cli {

namespace {

// A string YAML reads back as the same string when written plainly.
bool plain_yaml(const std::string& s) {
  if (s.empty()) return false;
  for (const char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-' ||
          c == ','))
      return false;
  static const char* const k_words[] = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"};
  for (const char* w : k_words) {
    std::string lower = s;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == w) return false;
  }
  const char first = s.front();
  return !(std::isdigit(static_cast<unsigned char>(first)) || first == '-' || first == '.');
}

// The keys nested by their dotted paths, in the order they first appear.
struct YamlTree {
  std::string key;
  nlohmann::json value;  // a leaf's
  std::vector<YamlTree> children;
  bool leaf = true;
};

void yaml_insert(std::vector<YamlTree>& level, const std::string& path, const nlohmann::json& value) {
  const size_t dot = path.find('.');
  const std::string head = path.substr(0, dot);
  auto it = std::find_if(level.begin(), level.end(), [&](const YamlTree& t) { return t.key == head; });
  if (it == level.end()) {
    level.push_back({head, nullptr, {}, true});
    it = level.end() - 1;
  }
  if (dot == std::string::npos) {
    it->value = value;
    return;
  }
  it->leaf = false;
  yaml_insert(it->children, path.substr(dot + 1), value);
}

void yaml_write(const std::vector<YamlTree>& level, const std::string& indent, std::string& out) {
  for (const YamlTree& t : level) {
    if (t.leaf) {
      out += indent + t.key + ": " + yaml_value(t.value) + "\n";
    } else {
      out += indent + t.key + ":\n";
      yaml_write(t.children, indent + "  ", out);
    }
  }
}

// Sets the dotted path in a JSON document (null removes it), making the objects on the way.
void json_set(nlohmann::ordered_json& doc, const std::string& path, const nlohmann::json& value) {
  nlohmann::ordered_json* at = &doc;
  size_t start = 0;
  for (size_t dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1) {
    const std::string key = path.substr(start, dot - start);
    if (!at->contains(key) || !(*at)[key].is_object()) {
      if (value.is_null()) return;
      (*at)[key] = nlohmann::ordered_json::object();
    }
    at = &(*at)[key];
  }
  const std::string last = path.substr(start);
  if (value.is_null())
    at->erase(last);
  else
    (*at)[last] = nlohmann::ordered_json::parse(value.dump());
}

std::string shell_word(const std::string& w) {
  for (const char c : w)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ',' ||
          c == '/'))
      return "'" + w + "'";
  return w.empty() ? "''" : w;
}

}  // namespace

std::string yaml_value(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number()) return v.dump();
  if (v.is_string()) return plain_yaml(v.get<std::string>()) ? v.get<std::string>() : v.dump();
  std::string out;
  if (v.is_array()) {
    for (const auto& item : v) out += (out.empty() ? "" : ", ") + yaml_value(item);
    return "[" + out + "]";
  }
  for (const auto& [k, item] : v.items()) out += (out.empty() ? "" : ", ") + k + ": " + yaml_value(item);
  return "{" + out + "}";
}

std::string yaml_fragment_text(const EmitSettings& s, const std::vector<std::string>& notes,
                               const EmitRequest& e, const FromReport* same) {
  std::string out =
      "# memplan " + e.command + " --emit " + emit_framework_name(e.framework) + ": " + e.summary + "\n";
  if (same)
    out += "# " + std::string(s.keys.empty() ? "nothing to change in " : "the keys to change in ") +
           terminal_field(same->path) + (s.keys.empty() ? "" : " (merge them in; its other keys stay)") +
           "\n";
  for (const std::string& n : notes) out += "# " + n + "\n";
  std::vector<YamlTree> tree;
  for (const EmitSetting& k : s.keys) yaml_insert(tree, k.key, k.value);
  yaml_write(tree, "", out);
  return out;
}

std::string deepspeed_json_text(const EmitSettings& s, const FromReport* same) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  if (same) {
    const std::string text = read_small_file(same->path, config_limit::k_file, "--from");
    try {
      doc = nlohmann::ordered_json::parse(text);
    } catch (const nlohmann::json::exception&) {
      throw Error(same->path, "is not JSON that --emit deepspeed can rewrite");
    }
  }
  for (const EmitSetting& k : s.keys) json_set(doc, k.key, k.value);
  return doc.dump(2) + "\n";
}

std::string command_line_text(const EmitSettings& s) {
  std::string out;
  for (const EmitSetting& k : s.keys) {
    const std::string value = k.value.is_string()    ? k.value.get<std::string>()
                              : k.value.is_boolean() ? (k.value.get<bool>() ? "true" : "false")
                              : k.value.is_null()    ? ""
                                                     : k.value.dump();
    out += (out.empty() ? "" : " ") + k.key + (value.empty() ? "" : " " + shell_word(value));
  }
  return out + "\n";
}

}  // namespace memplan::cli
