// The web build has no yaml-cpp: a YAML --from file is refused (DeepSpeed JSON still reads).
#include <memplan/error.hpp>

#include "cli/config_node.hpp"

namespace memplan::cli {

ConfigNode parse_yaml_config(std::string_view, const std::string& path) {
  throw Error(path, "YAML configurations are not read in the web build (use the memplan command line)");
}

}  // namespace memplan::cli
