#include <memplan/model_files.hpp>
#include "core/models/safetensors.hpp"

#include <memplan/error.hpp>
#include "core/base/file_reader.hpp"
#include "core/base/text.hpp"
#include "core/models/gguf.hpp"
#include "core/models/hf_config.hpp"

namespace memplan {
namespace {}  // namespace

const char* to_string(ModelFileKind kind) {
  switch (kind) {
    case ModelFileKind::hf_config:
      return "config";
    case ModelFileKind::safetensors:
      return "safetensors";
    case ModelFileKind::gguf:
      return "gguf";
  }
  return "?";
}

ModelFileKind detect_model_file_kind(const std::string& path) {
  if (is_directory(path)) {
    if (!list_files(path, ".safetensors").empty() || !list_files(path, ".safetensors.index.json").empty())
      return ModelFileKind::safetensors;
    std::vector<std::string> ggufs = list_files(path, ".gguf");
    if (ggufs.size() == 1) return ModelFileKind::gguf;
    if (ggufs.size() > 1)
      throw Error(path, "holds " + std::to_string(ggufs.size()) + " .gguf files; name the one to read");
    if (is_regular_file(join_path(path, "config.json"))) return ModelFileKind::hf_config;
    throw Error(path, "holds no *.safetensors, *.gguf or config.json");
  }
  if (ends_with(path, ".gguf")) return ModelFileKind::gguf;
  if (ends_with(path, ".safetensors") || ends_with(path, ".index.json")) return ModelFileKind::safetensors;
  if (ends_with(path, ".json")) return ModelFileKind::hf_config;
  std::string head = read_file_prefix(path, 9);
  if (head.rfind("GGUF", 0) == 0) return ModelFileKind::gguf;
  size_t i = 0;
  while (i < head.size() && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) ++i;
  if (i < head.size() && head[i] == '{') return ModelFileKind::hf_config;
  return ModelFileKind::safetensors;
}

ModelFileReport inspect_model_files(const std::string& path, const ModelReadOptions& options) {
  ModelFileReport r;
  r.path = path;
  r.kind = detect_model_file_kind(path);
  switch (r.kind) {
    case ModelFileKind::hf_config: {
      HfConfig c = read_hf_config_detail(path, options);
      r.model = c.model;
      r.files.push_back(c.model.source);
      r.config_family = c.family;
      r.config_fields = c.fields;
      break;
    }
    case ModelFileKind::safetensors: {
      SafetensorsModel m = read_safetensors_model(path);
      r.model = model_spec_of(m);
      if (!m.index_file.empty()) r.files.push_back(m.index_file);
      for (const SafetensorsHeader& h : m.shards) r.files.push_back(h.file);
      r.by_dtype = m.by_dtype;
      r.tensors = m.tensors;
      r.elements = m.elements;
      r.bytes = m.bytes;
      std::string config = join_path(is_directory(path) ? path : ".", "config.json");
      if (!m.shards.empty()) {
        const std::string& f = m.shards.front().file;
        size_t slash = f.find_last_of('/');
        config = join_path(slash == std::string::npos ? "." : f.substr(0, slash), "config.json");
      }
      if (r.model.arch && is_regular_file(config)) {
        HfConfig c = read_hf_config_detail(config, options);
        r.files.push_back(config);
        r.model.layer_kinds = c.model.layer_kinds;
        r.config_family = c.family;
        r.config_fields = c.fields;
      }
      break;
    }
    case ModelFileKind::gguf: {
      std::string file = path;
      if (is_directory(path)) file = join_path(path, list_files(path, ".gguf").front());
      GgufFile g = read_gguf_file(file);
      r.model = model_spec_of(g);
      r.files.push_back(file);
      for (const GgufTypeTotal& t : gguf_type_totals(g)) {
        r.by_dtype.push_back({t.type, t.tensors, t.elements, t.bytes});
        r.tensors += t.tensors;
        r.elements += t.elements;
        r.bytes += t.bytes;
      }
      break;
    }
  }
  return r;
}

}  // namespace memplan
