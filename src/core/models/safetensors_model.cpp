// A model's safetensors files taken together: which files (single, index, folder), totals per
// dtype, parameters apart from buffers, and the ModelSpec the estimate uses.
#include "core/models/safetensors.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"
#include "core/base/file_reader.hpp"
#include "core/base/text.hpp"
#include "core/models/hf_config.hpp"

namespace memplan {
namespace {

std::string dir_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

void read_index(SafetensorsModel& m, const std::string& index_path) {
  m.index_file = index_path;
  SafetensorsIndex idx = parse_safetensors_index(read_small_file(index_path, k_max_index_bytes), index_path);
  m.index_total_size = idx.total_size;
  const std::string dir = dir_of(index_path);
  std::map<std::string, std::set<std::string>> names_in;  // shard -> tensor names
  for (const std::string& shard : idx.shards) {
    m.shards.push_back(read_safetensors_header(join_path(dir, shard)));
    for (const SafetensorsTensor& t : m.shards.back().tensors) names_in[shard].insert(t.name);
  }
  std::set<std::string> mapped;
  for (const auto& [tensor, shard] : idx.weight_map) {
    if (!names_in[shard].count(tensor))
      throw Error(index_path,
                  "tensor \"" + tensor + "\" is mapped to " + shard + ", which has no such tensor");
    mapped.insert(tensor);
  }
  uint64_t unmapped = 0;
  for (const SafetensorsHeader& h : m.shards)
    for (const SafetensorsTensor& t : h.tensors) unmapped += !mapped.count(t.name);
  if (unmapped)
    m.notes.push_back(std::to_string(unmapped) +
                      " tensors in the shards are not in the index's weight_map (counted)");
}

void collect_files(SafetensorsModel& m, const std::string& path) {
  if (is_directory(path)) {
    std::vector<std::string> indexes = list_files(path, ".safetensors.index.json");
    std::string index;
    for (const std::string& i : indexes)
      if (i == "model.safetensors.index.json") index = i;
    if (index.empty() && indexes.size() == 1) index = indexes.front();
    if (!index.empty()) return read_index(m, join_path(path, index));
    std::vector<std::string> files = list_files(path, ".safetensors");
    if (files.empty())
      throw Error(path,
                  "holds no *.safetensors files and no model.safetensors.index.json (memplan reads "
                  "safetensors headers, GGUF files and config.json, not pickled .bin checkpoints)");
    for (const std::string& f : files) m.shards.push_back(read_safetensors_header(join_path(path, f)));
    if (files.size() > 1)
      m.notes.push_back("no index: read all " + std::to_string(files.size()) +
                        " *.safetensors files in the folder");
    return;
  }
  if (ends_with(path, ".index.json")) return read_index(m, path);
  m.shards.push_back(read_safetensors_header(path));
}

}  // namespace

SafetensorsModel read_safetensors_model(const std::string& path_or_dir) {
  SafetensorsModel m;
  m.path = path_or_dir;
  collect_files(m, path_or_dir);

  std::map<std::string, DtypeTotal> totals;
  std::map<std::string, uint64_t> param_bytes_by_dtype;
  std::map<std::string, std::string> seen;  // tensor -> file
  m.buffers.dtype = "buffers";
  uint64_t data_bytes = 0;
  for (const SafetensorsHeader& h : m.shards) {
    data_bytes = checked_add(data_bytes, h.data_bytes, "safetensors bytes");
    for (const SafetensorsTensor& t : h.tensors) {
      auto [it, fresh] = seen.emplace(t.name, h.file);
      if (!fresh) throw Error(h.file, "tensor \"" + t.name + "\" is also in " + it->second);
      DtypeTotal& d = totals[t.dtype];
      d.dtype = t.dtype;
      d.tensors += 1;
      d.elements = checked_add(d.elements, t.elements, "safetensors elements");
      d.bytes = checked_add(d.bytes, t.bytes(), "safetensors bytes");
      m.tensors += 1;
      m.elements = checked_add(m.elements, t.elements, "safetensors elements");
      m.bytes = checked_add(m.bytes, t.bytes(), "safetensors bytes");
      if (is_buffer_tensor_name(t.name)) {
        m.buffers.tensors += 1;
        m.buffers.elements += t.elements;
        m.buffers.bytes += t.bytes();
        continue;
      }
      m.parameters = checked_add(m.parameters, t.elements, "safetensors elements");
      m.parameter_tensors += 1;
      m.parameter_bytes = checked_add(m.parameter_bytes, t.bytes(), "safetensors bytes");
      param_bytes_by_dtype[t.dtype] += t.bytes();
    }
  }
  for (auto& [name, d] : totals) m.by_dtype.push_back(d);
  std::stable_sort(m.by_dtype.begin(), m.by_dtype.end(),
                   [](const DtypeTotal& a, const DtypeTotal& b) { return a.bytes > b.bytes; });

  if (m.buffers.tensors)
    m.notes.push_back(
        std::to_string(m.buffers.tensors) + " buffer tensors (" + group_thousands(m.buffers.elements) +
        " elements: rotary inv_freq, causal masks, position_ids) are stored but are not parameters");
  if (m.index_total_size && *m.index_total_size != data_bytes)
    m.notes.push_back("the index's total_size " + group_thousands(*m.index_total_size) +
                      " differs from the " + group_thousands(data_bytes) +
                      " data bytes in the shards; the shards were used");

  std::string top;
  uint64_t top_bytes = 0;
  for (const auto& [dtype, bytes] : param_bytes_by_dtype)
    if (bytes > top_bytes) top = dtype, top_bytes = bytes;
  if (!top.empty()) {
    const SafetensorsDtype* d = find_safetensors_dtype(top);
    m.weight_format = d->storage_format;
    if (top == "I32" || top == "U32" || top == "U8" || top == "I8")
      m.notes.push_back("most weight bytes are " + top +
                        ": the model looks quantised (packed integers); "
                        "element counts are containers, not weights, and the bytes are exact");
    if (!m.weight_format.empty())
      m.notes.push_back("weights stored as " + m.weight_format + " (" + top +
                        " tensors): the default weight precision");
  }
  return m;
}

ModelSpec model_spec_of(const SafetensorsModel& m) {
  ModelSpec s;
  s.id = m.path;
  s.name = m.path;
  s.source = "safetensors headers of " + m.path + " (" + std::to_string(m.shards.size()) +
             (m.shards.size() == 1 ? " file)" : " files)");
  s.parameters = m.parameters;
  s.tensors = m.parameter_tensors;
  s.weight_format = m.weight_format;
  s.weight_bytes = m.parameter_bytes;
  s.notes = m.notes;
  if (m.shards.empty()) return s;
  std::string config = join_path(dir_of(m.shards.front().file), "config.json");
  if (!is_regular_file(config)) {
    s.notes.push_back("no config.json next to the weights: architecture unknown (give " +
                      field_ref(Field::config) + " for activations)");
    return s;
  }
  try {
    HfConfig c = read_hf_config_detail(config);
    s.arch = c.model.arch;
    s.name = c.model.name;
    if (c.model.active_parameters && c.model.parameters) {
      // MoE: the share of active parameters from the config, applied to the stored count.
      s.active_parameters = static_cast<uint64_t>(
          static_cast<double>(s.parameters) *
          (static_cast<double>(c.model.active_parameters) / static_cast<double>(c.model.parameters)));
    }
    s.notes.push_back("architecture from " + config);
    if (c.model.parameters != s.parameters)
      s.notes.push_back(config + " gives " + group_thousands(c.model.parameters) +
                        " parameters; the headers hold " + group_thousands(s.parameters) +
                        " (the headers are used)");
  } catch (const Error& e) {
    s.notes.push_back(std::string("config.json next to the weights was not used: ") + e.what());
  }
  return s;
}

ModelSpec read_safetensors(const std::string& path_or_dir) {
  return model_spec_of(read_safetensors_model(path_or_dir));
}

}  // namespace memplan
