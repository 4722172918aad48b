#include "cli/config_node.hpp"

#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include "core/base/json_text.hpp"

namespace memplan::cli {

const ConfigNode* ConfigNode::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}

std::string config_where(const std::string& path, const ConfigNode& node) {
  if (!node.line) return path;
  return path + ":" + std::to_string(node.line) + ":" + std::to_string(node.column);
}

void ConfigTreeBuilder::fail(uint64_t line, uint64_t column, const std::string& message) const {
  ConfigNode at;
  at.line = line;
  at.column = column;
  throw Error(config_where(path_, at), message);
}

void ConfigTreeBuilder::add(ConfigNode node) {
  if (++nodes_ > config_limit::k_nodes)
    fail(node.line, node.column, "more than " + std::to_string(config_limit::k_nodes) + " values");
  if (stack_.empty()) {
    if (done_) fail(node.line, node.column, "holds more than one document");
    root_ = std::move(node);
    done_ = true;
    return;
  }
  Frame& f = stack_.back();
  if (f.node.kind == ConfigNode::Kind::list) {
    f.node.items.push_back(std::move(node));
    return;
  }
  if (!f.has_key) {  // YAML: the first node of a pair is its key
    if (node.kind == ConfigNode::Kind::map || node.kind == ConfigNode::Kind::list)
      fail(node.line, node.column, "a mapping key must be a plain value");
    key(node.text, node.line, node.column);
    return;
  }
  f.node.entries.emplace_back(std::move(f.key), std::move(node));
  f.has_key = false;
}

void ConfigTreeBuilder::key(std::string text, uint64_t line, uint64_t column) {
  Frame& f = stack_.back();
  if (f.node.find(text))
    fail(line, column,
         "key \"" + memplan::detail::printable(text, 80) + "\" appears twice (expected each key once)");
  f.key = std::move(text);
  f.has_key = true;
}

void ConfigTreeBuilder::scalar(std::string text, uint64_t line, uint64_t column) {
  ConfigNode n;
  n.kind = ConfigNode::Kind::scalar;
  n.text = std::move(text);
  n.line = line;
  n.column = column;
  add(std::move(n));
}

void ConfigTreeBuilder::null_value(uint64_t line, uint64_t column) {
  ConfigNode n;
  n.line = line;
  n.column = column;
  add(std::move(n));
}

void ConfigTreeBuilder::begin(ConfigNode::Kind kind, uint64_t line, uint64_t column) {
  if (stack_.size() >= config_limit::k_depth)
    fail(line, column, "nested deeper than " + std::to_string(config_limit::k_depth) + " levels");
  Frame f;
  f.node.kind = kind;
  f.node.line = line;
  f.node.column = column;
  stack_.push_back(std::move(f));
}

void ConfigTreeBuilder::end() {
  ConfigNode n = std::move(stack_.back().node);
  stack_.pop_back();
  add(std::move(n));
}

ConfigNode ConfigTreeBuilder::take() {
  if (!done_) throw Error(path_, "is empty (expected a configuration)");
  return std::move(root_);
}

namespace {

// nlohmann's SAX events into the builder; positions are not known.
class JsonConfigEvents : public nlohmann::json_sax<nlohmann::json> {
 public:
  JsonConfigEvents(ConfigTreeBuilder& b, const std::string& path) : b_(b), path_(path) {}
  bool null() override { return b_.null_value(0, 0), true; }
  bool boolean(bool v) override { return b_.scalar(v ? "true" : "false", 0, 0), true; }
  bool number_integer(number_integer_t v) override { return b_.scalar(std::to_string(v), 0, 0), true; }
  bool number_unsigned(number_unsigned_t v) override { return b_.scalar(std::to_string(v), 0, 0), true; }
  bool number_float(number_float_t, const string_t& s) override { return b_.scalar(s, 0, 0), true; }
  bool string(string_t& v) override { return b_.scalar(v, 0, 0), true; }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override { return b_.begin(ConfigNode::Kind::map, 0, 0), true; }
  bool key(string_t& k) override { return b_.key(k, 0, 0), true; }
  bool end_object() override { return b_.end(), true; }
  bool start_array(std::size_t) override { return b_.begin(ConfigNode::Kind::list, 0, 0), true; }
  bool end_array() override { return b_.end(), true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    std::string why = e.what();
    if (const size_t at = why.find("] "); at != std::string::npos) why = why.substr(at + 2);
    throw Error(path_, "is not valid JSON (" + why + ")");
  }

 private:
  ConfigTreeBuilder& b_;
  const std::string& path_;
};

}  // namespace

ConfigNode parse_json_config(std::string_view text, const std::string& path) {
  if (text.find('\0') != std::string_view::npos) throw Error(path, "holds a NUL byte (expected JSON text)");
  ConfigTreeBuilder b(path);
  JsonConfigEvents events(b, path);
  nlohmann::json::sax_parse(text.begin(), text.end(), &events);
  return b.take();
}

}  // namespace memplan::cli
