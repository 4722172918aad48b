#pragma once
// A configuration file as a tree (YAML or JSON, one shape): what the --from readers walk. Bounded:
// at most config_limit::k_depth deep and k_nodes nodes; a key repeated in a mapping is refused.
// Scalars keep their text as written ("2e-5", "true", "auto"); YAML scalars keep their line and
// column (1-based) for the one-line errors, JSON ones have 0.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memplan::cli {

namespace config_limit {
inline constexpr uint64_t k_file = 1u << 20;  // --from files: real ones are 0.5-10 kB
inline constexpr size_t k_depth = 32;         // real configs nest 2-4 deep
inline constexpr size_t k_nodes = 100000;     // keys, values and list items together
}  // namespace config_limit

struct ConfigNode {
  enum class Kind { null, scalar, map, list };
  Kind kind = Kind::null;
  std::string text;                                         // a scalar as written
  std::vector<std::pair<std::string, ConfigNode>> entries;  // a mapping, in file order
  std::vector<ConfigNode> items;                            // a list
  uint64_t line = 0, column = 0;                            // 1-based; 0 = not known (JSON)

  // The value of `key` in a mapping, or nullptr (also when this is not a mapping).
  const ConfigNode* find(std::string_view key) const;
};

// Builds a ConfigNode from parse events, with the limits above; the YAML and JSON readers drive
// it. Errors are memplan::Error naming `path` (and the line and column where known).
class ConfigTreeBuilder {
 public:
  explicit ConfigTreeBuilder(std::string path) : path_(std::move(path)) {}
  void scalar(std::string text, uint64_t line, uint64_t column);
  void null_value(uint64_t line, uint64_t column);
  void begin(ConfigNode::Kind kind, uint64_t line, uint64_t column);
  void end();
  void key(std::string text, uint64_t line, uint64_t column);  // JSON: keys come as keys
  ConfigNode take();                                           // the document's root

 private:
  struct Frame {
    ConfigNode node;
    bool has_key = false;
    std::string key;
  };
  void add(ConfigNode node);
  [[noreturn]] void fail(uint64_t line, uint64_t column, const std::string& message) const;
  std::string path_;
  std::vector<Frame> stack_;
  ConfigNode root_;
  bool done_ = false;
  size_t nodes_ = 0;
};

// "file:line:column" where the node's position is known, else "file".
std::string config_where(const std::string& path, const ConfigNode& node);

// A YAML document (one) as a tree; aliases refused. Not in the web build (an Error says so).
ConfigNode parse_yaml_config(std::string_view text, const std::string& path);

// A JSON document as a tree.
ConfigNode parse_json_config(std::string_view text, const std::string& path);

}  // namespace memplan::cli
