// The only file that knows yaml-cpp: its parse events into a ConfigNode (config_node.hpp).
#include <sstream>
#include <string>

#include <yaml-cpp/anchor.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <memplan/error.hpp>
#include "cli/config_node.hpp"

namespace memplan::cli {
namespace {

class YamlConfigEvents : public YAML::EventHandler {
 public:
  YamlConfigEvents(ConfigTreeBuilder& b, const std::string& path) : b_(b), path_(path) {}
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { b_.null_value(line(m), column(m)); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override {
    throw Error(path_ + ":" + std::to_string(line(m)) + ":" + std::to_string(column(m)),
                "YAML aliases (*name) are not read (expected the values written out)");
  }
  void OnScalar(const YAML::Mark& m, const std::string& tag, YAML::anchor_t,
                const std::string& value) override {
    // A plain null/~ is YAML's null; a quoted "null" is text (yaml-cpp tags quoted scalars "!").
    if (tag != "!" && (value == "null" || value == "Null" || value == "NULL" || value == "~"))
      b_.null_value(line(m), column(m));
    else
      b_.scalar(value, line(m), column(m));
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    b_.begin(ConfigNode::Kind::list, line(m), column(m));
  }
  void OnSequenceEnd() override { b_.end(); }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    b_.begin(ConfigNode::Kind::map, line(m), column(m));
  }
  void OnMapEnd() override { b_.end(); }

 private:
  static uint64_t line(const YAML::Mark& m) { return static_cast<uint64_t>(m.line) + 1; }
  static uint64_t column(const YAML::Mark& m) { return static_cast<uint64_t>(m.column) + 1; }
  ConfigTreeBuilder& b_;
  const std::string& path_;
};

}  // namespace

ConfigNode parse_yaml_config(std::string_view text, const std::string& path) {
  if (text.find('\0') != std::string_view::npos) throw Error(path, "holds a NUL byte (expected YAML text)");
  std::istringstream in{std::string(text)};
  ConfigTreeBuilder b(path);
  YamlConfigEvents events(b, path);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(events)) {
    }
  } catch (const YAML::Exception& e) {
    const std::string where = e.mark.is_null() ? path
                                               : path + ":" + std::to_string(e.mark.line + 1) + ":" +
                                                     std::to_string(e.mark.column + 1);
    throw Error(where, "is not valid YAML (" + e.msg + ")");
  }
  return b.take();
}

}  // namespace memplan::cli
