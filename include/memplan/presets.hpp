#pragma once
// GPU and model presets: JSON data embedded at build time (data/*.json), validated at load,
// overridable with --presets FILE or MEMPLAN_DATA_DIR.

#include <string>
#include <string_view>
#include <vector>

#include <memplan/gpu.hpp>
#include <memplan/model.hpp>

namespace memplan {

struct ModelPreset {
  ModelSpec model;
  std::vector<std::string> aliases;
};

struct Presets {
  std::vector<GpuSpec> gpus;
  std::vector<std::string> default_gpus;  // ids for the estimate fit table
  std::vector<ModelPreset> models;
};

// Parses and validates the two documents; `origin` names them in errors.
// Either text may be empty (that part stays empty).
Presets parse_presets(std::string_view gpus_json, std::string_view models_json, std::string_view origin);

// The presets compiled into the binary.
const Presets& builtin_presets();

// Builtin presets with the GPUs and/or models of `path` replacing them (a file with a "gpus"
// and/or "models" array in the shape of data/gpus.json / data/model_presets.json), or of a
// directory holding gpus.json and/or model_presets.json.
Presets load_presets_override(const std::string& path);

// Looks up by id or alias (case-insensitive); Error names `subject` with "did you mean".
const GpuSpec& find_gpu(const Presets& presets, std::string_view subject, std::string_view name);
const ModelPreset& find_model(const Presets& presets, std::string_view subject, std::string_view name);

}  // namespace memplan
