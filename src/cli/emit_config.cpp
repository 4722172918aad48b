#include "cli/emit_config.hpp"

#include <algorithm>

#include <memplan/error.hpp>
#include <memplan/fit.hpp>

#include "cli/emit_render.hpp"
#include "cli/emit_settings.hpp"

namespace memplan::cli {

namespace {

struct EmitName {
  EmitFramework framework;
  const char* name;
};

const EmitName k_emit_names[] = {
    {EmitFramework::deepspeed, "deepspeed"},
    {EmitFramework::axolotl, "axolotl"},
    {EmitFramework::llamafactory, "llamafactory"},
    {EmitFramework::torchtune, "torchtune"},
    {EmitFramework::accelerate, "accelerate"},
    {EmitFramework::trainer, "trainer"},
    {EmitFramework::flags, "flags"},
};

std::string emit_choices() {
  std::string s;
  for (const EmitName& n : k_emit_names) s += std::string(s.empty() ? "" : ", ") + n.name;
  return s;
}

EmitSettings settings_for(EmitFramework f, const EstimateRequest& r, const FromReport* from) {
  switch (f) {
    case EmitFramework::deepspeed:
      return deepspeed_settings(r, from);
    case EmitFramework::axolotl:
      return axolotl_settings(r, from);
    case EmitFramework::llamafactory:
      return llamafactory_settings(r, from);
    case EmitFramework::torchtune:
      return torchtune_settings(r, from);
    case EmitFramework::accelerate:
      return accelerate_settings(r, from);
    case EmitFramework::trainer:
      return trainer_settings(r, from);
    case EmitFramework::flags:
      break;
  }
  return flags_settings(r, from);
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// The chosen plan's settings that differ from the run as given (null: a key to remove), and the
// notes the given run did not have already.
EmitSettings changed_settings(const EmitSettings& given, const EmitSettings& chosen) {
  EmitSettings out;
  for (const EmitSetting& c : chosen.keys) {
    const auto was = std::find_if(given.keys.begin(), given.keys.end(),
                                  [&](const EmitSetting& g) { return g.key == c.key; });
    if (was == given.keys.end() || was->value != c.value) out.keys.push_back(c);
  }
  for (const EmitSetting& g : given.keys)
    if (std::none_of(chosen.keys.begin(), chosen.keys.end(),
                     [&](const EmitSetting& c) { return c.key == g.key; }))
      out.keys.push_back({g.key, nullptr});
  for (const std::string& n : chosen.cannot)
    if (!contains(given.cannot, n)) out.cannot.push_back(n);
  for (const std::string& n : chosen.launch)
    if (!contains(given.launch, n)) out.launch.push_back(n);
  return out;
}

}  // namespace

const char* emit_framework_name(EmitFramework f) {
  for (const EmitName& n : k_emit_names)
    if (n.framework == f) return n.name;
  return "flags";
}

EmitFramework parse_emit_framework(const std::string& value, const FromReport* from) {
  if (value.empty() || value == "from") {
    if (!from)
      throw Error("--emit", std::string(value.empty() ? "without a value" : "\"from\"") +
                                " needs --from FILE (the framework of the file); else one of " +
                                emit_choices());
    for (const EmitName& n : k_emit_names)
      if (from->framework == n.name) return n.framework;
    throw Error("--emit", "cannot write " + from->framework + " configs; give one of " + emit_choices());
  }
  for (const EmitName& n : k_emit_names)
    if (value == n.name) return n.framework;
  throw Error("--emit", "\"" + value + "\" is not one of " + emit_choices() + ", from");
}

EmittedConfig emit_config(const EmitRequest& e) {
  if (e.chosen.mode == Mode::infer && e.framework != EmitFramework::flags)
    throw Error("--emit", std::string(emit_framework_name(e.framework)) +
                              " is a training configuration and the run is inference (--mode infer): give "
                              "--emit flags");
  const FromReport* same = e.from && e.from->framework == emit_framework_name(e.framework) ? e.from : nullptr;
  const EmitSettings chosen = settings_for(e.framework, e.chosen, same);
  // With a file of this framework (or memplan's flags beside any run), only what changes.
  const bool diff = same || e.framework == EmitFramework::flags;
  EmitSettings s = diff ? changed_settings(settings_for(e.framework, e.given, same), chosen) : chosen;
  EmittedConfig c;
  c.framework = e.framework;
  c.keys = nlohmann::json::object();
  for (const EmitSetting& k : s.keys) c.keys[k.key] = k.value;
  for (const std::string& n : s.cannot)
    c.notes.push_back(std::string("not expressible in ") + emit_framework_name(e.framework) + ": " + n);
  for (const std::string& n : s.launch) c.notes.push_back(n);
  for (const std::string& n : e.notes) c.notes.push_back(n);
  switch (e.framework) {
    case EmitFramework::deepspeed:
      c.text = deepspeed_json_text(s, same);
      break;
    case EmitFramework::trainer:
    case EmitFramework::flags:
      c.text = command_line_text(s);
      break;
    default:
      c.text = yaml_fragment_text(s, c.notes, e, same);
      c.notes_in_text = true;
  }
  return c;
}

nlohmann::json emitted_json(const EmittedConfig& c, const EmitRequest& e) {
  return {
      {"framework", emit_framework_name(c.framework)},
      {"file", e.from && e.from->framework == emit_framework_name(c.framework) ? nlohmann::json(e.from->path)
                                                                               : nlohmann::json()},
      {"chosen", e.summary},
      {"rank", e.rank},
      {"required_bytes", e.required_bytes},
      {"memory_bytes", e.memory_bytes},
      {"verdict", verdict_name(verdict_for(e.required_bytes, e.memory_bytes))},
      {"keys", c.keys},
      {"text", c.text},
      {"notes", c.notes}};
}

void print_emitted(const EmittedConfig& c, const EmitRequest& e, Io& io) {
  io.out << c.text;
  if (c.notes_in_text) return;  // the YAML's comment lines say it
  io.err << "memplan: " << e.command << " --emit " << emit_framework_name(c.framework) << ": " << e.summary
         << "\n";
  for (const std::string& n : c.notes) io.err << "memplan: note: " << n << "\n";
}

}  // namespace memplan::cli
