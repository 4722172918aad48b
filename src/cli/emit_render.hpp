#pragma once
// Internal to --emit: settings (emit_settings.hpp) as text: a YAML fragment, a DeepSpeed JSON, a
// command line.

#include <string>
#include <vector>

#include "cli/emit_config.hpp"
#include "cli/emit_settings.hpp"

namespace memplan::cli {

// The keys as YAML (dotted paths nested), after comment lines: what was chosen, the file the keys
// go into (`same`: the --from file of this framework) and `notes`.
std::string yaml_fragment_text(const EmitSettings& s, const std::vector<std::string>& notes,
                               const EmitRequest& e, const FromReport* same);

// A complete DeepSpeed JSON: the --from file (`same`) with the keys applied, else the keys alone.
std::string deepspeed_json_text(const EmitSettings& s, const FromReport* same);

// "--batch 2 --grad-accum 4": one line (values with spaces quoted for a POSIX shell).
std::string command_line_text(const EmitSettings& s);

// A value as a YAML scalar or flow collection: 2, true, adamw_bnb_8bit, "1e-5", [q_proj, v_proj].
std::string yaml_value(const nlohmann::json& v);

}  // namespace memplan::cli
