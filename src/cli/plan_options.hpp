#pragma once
// The options every planning command shares (estimate, fit, max-batch, advise): the model
// source, the recipe, the run and the GPUs. Values may also come from a plan file
// (--plan memplan.json, the shape of the JSON output's "inputs"); flags override it.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memplan/estimate.hpp>
#include <memplan/gpu.hpp>
#include <memplan/presets.hpp>

#include "cli/command.hpp"
#include "cli/from_config.hpp"
#include "cli/plan_scope.hpp"

namespace memplan::cli {

// Raw option values by key ("params", "precision", ...), as given on the command line.
struct RawPlan {
  std::map<std::string, std::string> given;
  std::string plan_file;
  std::string from_file;  // --from: a DeepSpeed / Axolotl / LLaMA-Factory config (from_config.hpp)
  std::string presets_file;
  bool offline = false;  // --offline: a Hugging Face model id from the caches only, never the network
};

// What the GPU list asks for.
struct GpuTargets {
  std::vector<GpuSpec> gpus;
  bool asked_local = false;               // "local" / "cuda:N" was named
  std::vector<std::string> device_notes;  // why a real device could not be read
};

// A resolved plan: the request, the presets it was resolved against and the fit targets.
struct Plan {
  EstimateRequest request;
  Presets presets;
  GpuTargets targets;
  nlohmann::json inputs;  // every input, defaults resolved (echoed in JSON output)
  bool gpu_given = false;
};

// What --from reads, with the flags of `raw` that override its values; nullopt without --from.
std::optional<FromReport> read_from(const RawPlan& raw);

// `body` with its output given the "inputs from FILE" section: the JSON's "from" key, or the
// text's lines before the rest; unchanged without --from, and for CSV or --quiet. `raw` and
// `output` must outlive the runner (a command's shared state).
Runner with_from_section(const RawPlan& raw, const RawOutputOptions& output, Runner body);

// Adds the shared options to `sub`: --plan, --presets and the plan flags of the option table that
// `scope` takes (plan_scope.hpp; a plan file may still carry any key, read by the same rules).
// While a PlanArgs is alive, only the plan flags its arguments name are registered with CLI11
// (all of them when help is asked): registering ~45 options costs more than the estimate.
void add_plan_options(CLI::App& sub, RawPlan& raw, PlanScope scope);

// The command line that add_plan_options may register just the named flags for (app.cpp's run).
// An option that is never named can change nothing but the help, so the parse, its values and
// its error messages stay the same.
class PlanArgs {
 public:
  explicit PlanArgs(const std::vector<std::string>& args);
  // Every plan flag registered while it is alive, as without a PlanArgs (a command's whole option
  // list: its help, the flags a refusal names).
  explicit PlanArgs(std::nullptr_t);
  ~PlanArgs();
  PlanArgs(const PlanArgs&) = delete;
  PlanArgs& operator=(const PlanArgs&) = delete;

 private:
  const std::vector<std::string>* previous_;
};

// A plan file's text (as --plan reads it) as values by key, ready for RawPlan::given: the same
// JSON rules and key checks as --plan, without the file. For the plan fuzz target.
std::map<std::string, std::string> plan_file_values(std::string_view text, const std::string& path);

// Merges the plan file, checks every value and builds the request. Throws Error on bad input.
Plan resolve_plan(const RawPlan& raw);

// The presets: --presets FILE|DIR, else MEMPLAN_DATA_DIR, else the built-in ones.
Presets load_presets_for(const std::string& presets_file);

// For the commands that list the presets (gpus, models): adds the output options and --presets to
// `sub`, and sets `run` to call `list` with the loaded presets and the checked output options.
using PresetLister = std::function<int(const Presets& presets, const OutputOptions& out, Io& io)>;
void add_preset_listing(CLI::App& sub, Runner& run, PresetLister list);

// Resolves a --gpu list ("t4,rtx-4090", "all", "local", "cuda:1") against the presets.
GpuTargets resolve_gpus(const Presets& presets, const std::string& list);

}  // namespace memplan::cli
