#pragma once
// Whatever describes a model on disk — a config.json, safetensors files, a GGUF file, or a model
// folder holding them — read into one report: what was read and the ModelSpec it gives.
// `memplan inspect` prints it; `estimate` may use detect_model_file_kind for a bare path.

#include <cstdint>
#include <string>
#include <vector>

#include <memplan/model.hpp>

namespace memplan {

// Stored tensors of one dtype (safetensors) or ggml type (GGUF).
struct DtypeTotal {
  std::string dtype;
  uint64_t tensors = 0;
  uint64_t elements = 0;
  uint64_t bytes = 0;
};

enum class ModelFileKind { hf_config, safetensors, gguf };

// "config", "safetensors", "gguf".
const char* to_string(ModelFileKind kind);

// A folder: safetensors if it holds any (or an index), else a single .gguf, else config.json.
// A file: by extension (.gguf, .safetensors, .index.json, .json), else by its first bytes.
ModelFileKind detect_model_file_kind(const std::string& path);

struct ModelFileReport {
  std::string path;  // as given
  ModelFileKind kind = ModelFileKind::hf_config;
  ModelSpec model;
  std::vector<std::string> files;    // every file read
  std::vector<DtypeTotal> by_dtype;  // stored tensors per dtype / ggml type, largest first
  uint64_t tensors = 0;              // stored tensors (buffers included)
  uint64_t elements = 0;
  uint64_t bytes = 0;                      // stored tensor bytes
  std::string config_family;               // config.json formula used, "" when no config was read
  std::vector<std::string> config_fields;  // config.json keys read
};

// Reads `path` (see detect_model_file_kind) without reading any weights.
ModelFileReport inspect_model_files(const std::string& path, const ModelReadOptions& options = {});

}  // namespace memplan
