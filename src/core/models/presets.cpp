#include <memplan/presets.hpp>
#include "core/base/text.hpp"

#include <cctype>
#include <filesystem>

#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include "core/base/did_you_mean.hpp"
#include "core/base/file_reader.hpp"
#include "core/base/json_text.hpp"
#include "core/base/static_json.hpp"
#include "core/models/hf_config.hpp"

namespace memplan {
namespace embedded {
// The embedded documents converted into constant data at build time (cmake/embed.cmake).
const StaticJson& gpus_tree();
const StaticJson& models_tree();
}  // namespace embedded

namespace {

using nlohmann::json;

// The readers below take a document in either form: nlohmann::json (a file read at run time) or
// StaticJson (the embedded presets, converted at build time); these give the values out.
std::string string_of(const json& j) { return j.get<std::string>(); }
std::string string_of(const StaticJson& j) { return std::string(j.text); }
uint64_t unsigned_of(const json& j) { return j.get<uint64_t>(); }
uint64_t unsigned_of(const StaticJson& j) {
  return j.is_number_unsigned() ? j.unsigned_value : static_cast<uint64_t>(j.integer_value);
}
int64_t integer_of(const json& j) { return j.get<int64_t>(); }
int64_t integer_of(const StaticJson& j) {
  return j.is_number_unsigned() ? static_cast<int64_t>(j.unsigned_value) : j.integer_value;
}
double number_of(const json& j) { return j.get<double>(); }
double number_of(const StaticJson& j) { return j.number(); }
bool boolean_of(const json& j) { return j.get<bool>(); }
bool boolean_of(const StaticJson& j) { return j.boolean_value; }
// The member `field` of an object, or nullptr.
const json* member(const json& j, const char* field) {
  auto it = j.find(field);
  return it == j.end() ? nullptr : &*it;
}
const StaticJson* member(const StaticJson& j, const char* field) { return j.find(field); }

// The most memory a GPU preset may have: 16 TiB, 55x the largest accelerator sold in 2026 (288 GB).
// Larger values are typos (2^64 - 1) and would overflow the fit's signed spare bytes.
constexpr uint64_t k_max_gpu_memory_bytes = 16ull << 40;

// Typed field access with errors that name the document, the entry and the field.
template <class Json>
struct Reader {
  std::string where;  // "data/gpus.json: gpus[3] (t4)"
  const Json& j;

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw Error(where, "field \"" + field + "\" " + what);
  }
  std::string str(const char* field, bool required = true) const {
    const Json* v = member(j, field);
    if (!v || v->is_null()) {
      if (required) fail(field, "is missing");
      return "";
    }
    if (!v->is_string()) fail(field, "must be a string");
    return string_of(*v);
  }
  uint64_t u64(const char* field, bool required = true) const {
    const Json* v = member(j, field);
    if (!v || v->is_null()) {
      if (required) fail(field, "is missing");
      return 0;
    }
    if (!v->is_number_unsigned() && !(v->is_number_integer() && integer_of(*v) >= 0))
      fail(field, "must be a non-negative integer");
    return unsigned_of(*v);
  }
  double real(const char* field) const {
    const Json* v = member(j, field);
    if (!v || v->is_null()) return 0.0;
    if (!v->is_number()) fail(field, "must be a number");
    const double x = number_of(*v);
    if (!(x >= 0.0 && x <= 1.0)) fail(field, "must be in [0, 1]");
    return x;
  }
  bool boolean(const char* field, bool fallback) const {
    const Json* v = member(j, field);
    if (!v || v->is_null()) return fallback;
    if (!v->is_boolean()) fail(field, "must be true or false");
    return boolean_of(*v);
  }
  std::vector<std::string> strings(const char* field) const {
    std::vector<std::string> out;
    const Json* v = member(j, field);
    if (!v || v->is_null()) return out;
    if (!v->is_array()) fail(field, "must be an array of strings");
    out.reserve(v->size());
    for (const Json& s : *v) {
      if (!s.is_string()) fail(field, "must be an array of strings");
      out.push_back(string_of(s));
    }
    return out;
  }
};
template <class Json>
Reader(std::string, const Json&) -> Reader<Json>;

json parse_doc(std::string_view text, const std::string& origin) {
  // Bounded depth, a key twice refused (issue 32), the parse error's line and column.
  json doc = detail::parse_json_text(text, origin, "the presets file");
  if (!doc.is_object()) throw Error(origin, "must be a JSON object");
  return doc;
}

template <class Json>
GpuSpec read_gpu(const Json& j, const std::string& where) {
  if (!j.is_object()) throw Error(where, "must be an object");
  Reader r{where, j};
  GpuSpec g;
  g.id = r.str("id");
  Reader named{where + " (" + g.id + ")", j};
  g.name = named.str("name");
  g.aliases = named.strings("aliases");
  g.vendor = named.str("vendor", false);
  g.memory_total_bytes = named.u64("memory_total_bytes");
  if (g.memory_total_bytes == 0) named.fail("memory_total_bytes", "must be positive");
  if (g.memory_total_bytes > k_max_gpu_memory_bytes)
    named.fail("memory_total_bytes", std::to_string(g.memory_total_bytes) + " is above the limit of " +
                                         std::to_string(k_max_gpu_memory_bytes) + " bytes (16 TiB)");
  g.reserved_known = member(j, "memory_reserved_bytes") != nullptr;
  g.memory_reserved_bytes = named.u64("memory_reserved_bytes", false);
  if (g.memory_reserved_bytes >= g.memory_total_bytes)
    named.fail("memory_reserved_bytes", "must be below the total");
  g.budget_bytes = named.u64("budget_bytes", false);
  if (g.budget_bytes > g.memory_total_bytes) named.fail("budget_bytes", "must not exceed the total");
  g.budget_note = named.str("budget_note", false);
  g.compute_capability = named.str("compute_capability", false);
  g.sm_count = named.u64("sm_count", false);
  if (g.sm_count > 4096)
    named.fail("sm_count", std::to_string(g.sm_count) + " is above 4096 (no GPU has more)");
  g.bf16 = named.boolean("bf16", false);
  g.fp8 = named.boolean("fp8", false);
  g.source = named.str("source");
  g.notes = named.str("notes", false);
  return g;
}

template <class Json>
TransformerArch read_arch(const Json& j, const std::string& where) {
  if (!j.is_object()) throw Error(where, "field \"arch\" must be an object");
  Reader r{where + " arch", j};
  TransformerArch a;
  a.model_type = r.str("model_type");
  a.causal = r.boolean("causal", true);
  a.layers = r.u64("layers");
  a.hidden = r.u64("hidden");
  a.heads = r.u64("heads");
  a.kv_heads = r.u64("kv_heads", false);
  a.head_dim = r.u64("head_dim", false);
  a.intermediate = r.u64("intermediate");
  a.vocab = r.u64("vocab");
  a.max_positions = r.u64("max_positions", false);
  a.gated_mlp = r.boolean("gated_mlp", false);
  a.activation = r.str("activation", false);
  a.norm = r.str("norm", false);
  a.tied_embeddings = r.boolean("tied_embeddings", false);
  a.hidden_dropout = r.real("hidden_dropout");
  a.attention_dropout = r.real("attention_dropout");
  a.experts = r.u64("experts", false);
  a.experts_per_token = r.u64("experts_per_token", false);
  a.attn_softcap = static_cast<double>(r.u64("attn_logit_softcapping", false));
  a.final_softcap = static_cast<double>(r.u64("final_logit_softcapping", false));
  // Sliding-window attention as the model's config.json sets it (hf_config_attention.cpp reads the
  // same): `window_layers` of the layers attend to the last `sliding_window` tokens.
  a.attention_window = r.u64("sliding_window", false);
  a.window_layers = a.attention_window ? r.u64("window_layers") : 0;
  if (!a.layers || !a.hidden || !a.heads || !a.vocab) r.fail("layers/hidden/heads/vocab", "must be positive");
  if (a.window_layers > a.layers) r.fail("window_layers", "must be at most layers");
  if (a.kv_heads && a.heads % a.kv_heads) r.fail("kv_heads", "must divide heads");
  return a;
}

// "owner/name": one slash, neither side empty, letters, digits and - _ . only.
bool is_hf_repo_id(const std::string& id) {
  const size_t slash = id.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == id.size() ||
      id.find('/', slash + 1) != std::string::npos)
    return false;
  for (char c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/'))
      return false;
  return true;
}

template <class Json>
ModelPreset read_model(const Json& j, const std::string& where) {
  if (!j.is_object()) throw Error(where, "must be an object");
  Reader r{where, j};
  ModelPreset p;
  p.model.id = r.str("id");
  Reader named{where + " (" + p.model.id + ")", j};
  p.model.name = named.str("name");
  p.aliases = named.strings("aliases");
  p.model.parameters = named.u64("parameters");
  if (p.model.parameters == 0) named.fail("parameters", "must be positive");
  p.model.active_parameters = named.u64("active_parameters", false);
  p.model.tensors = named.u64("tensors", false);
  p.model.source = named.str("source");
  if (const Json* arch = member(j, "arch"); arch && !arch->is_null())
    p.model.arch = read_arch(*arch, named.where);
  p.model.hf_repo = named.str("hf_repo", false);
  if (!p.model.hf_repo.empty() && !is_hf_repo_id(p.model.hf_repo))
    named.fail("hf_repo", "must be a Hugging Face repository id, owner/name");
  // The checkpoint's torch_dtype, as its config.json says: what transformers v5 loads (from_pretrained's
  // dtype "auto") and what vLLM and llama.cpp's converter start from. A preset without one is fp32.
  const std::string dtype = named.str("torch_dtype", false);
  if (!dtype.empty()) {
    p.model.weight_format = storage_format_of_torch_dtype(dtype);
    if (p.model.weight_format != "fp32" && p.model.weight_format != "fp16" && p.model.weight_format != "bf16")
      named.fail("torch_dtype", "\"" + dtype + "\" is not float32, float16 or bfloat16");
    p.model.notes.push_back("weights stored as " + p.model.weight_format +
                            " (the checkpoint's torch_dtype \"" + dtype + "\")");
  }
  return p;
}

template <class T, class Id>
void check_unique(const std::vector<T>& items, Id id_of, const std::string& origin) {
  std::vector<std::string> seen;
  for (const T& item : items) {
    for (const std::string& key : id_of(item)) {
      const std::string k = to_lower(key);
      for (const std::string& s : seen)
        if (s == k) throw Error(origin, "the name \"" + key + "\" is used twice");
      seen.push_back(k);
    }
  }
}

// A GPU file without "defaults": the fit table uses its first four GPUs.
Presets with_defaults(Presets p) {
  if (p.default_gpus.empty())
    for (size_t i = 0; i < p.gpus.size() && i < 4; ++i) p.default_gpus.push_back(p.gpus[i].id);
  return p;
}

// The GPUs of a document in the shape of data/gpus.json into `p`.
template <class Json>
void read_gpus(const Json& doc, const std::string& o, Presets& p) {
  const Json* list = member(doc, "gpus");
  if (!list || !list->is_array()) throw Error(o, "needs a \"gpus\" array");
  if (list->size() == 0) throw Error(o, "\"gpus\" is empty (expected at least one GPU)");
  p.gpus.reserve(list->size());
  for (size_t i = 0; i < list->size(); ++i)
    p.gpus.push_back(read_gpu((*list)[i], o + ": gpus[" + std::to_string(i) + "]"));
  p.default_gpus = Reader{o, doc}.strings("defaults");
  check_unique(
      p.gpus,
      [](const GpuSpec& g) {
        auto v = g.aliases;
        v.push_back(g.id);
        return v;
      },
      o);
  for (const std::string& d : p.default_gpus) find_gpu(p, o + ": defaults", d);
}

// The models of a document in the shape of data/model_presets.json into `p`.
template <class Json>
void read_models(const Json& doc, const std::string& o, Presets& p) {
  const Json* list = member(doc, "models");
  if (!list || !list->is_array()) throw Error(o, "needs a \"models\" array");
  p.models.reserve(list->size());
  for (size_t i = 0; i < list->size(); ++i)
    p.models.push_back(read_model((*list)[i], o + ": models[" + std::to_string(i) + "]"));
  check_unique(
      p.models,
      [](const ModelPreset& m) {
        auto v = m.aliases;
        v.push_back(m.model.id);
        return v;
      },
      o);
}

}  // namespace

Presets parse_presets(std::string_view gpus_json, std::string_view models_json, std::string_view origin) {
  Presets p;
  const std::string o(origin);
  if (!gpus_json.empty()) read_gpus(parse_doc(gpus_json, o), o, p);
  if (!models_json.empty()) read_models(parse_doc(models_json, o), o, p);
  return p;
}

// The same readers and checks as parse_presets, over the documents cmake/embed.cmake converted
// at build time: no JSON parsing when a process starts.
const Presets& builtin_presets() {
  static const Presets presets = [] {
    Presets p;
    const std::string o = "embedded presets";
    read_gpus(embedded::gpus_tree(), o, p);
    read_models(embedded::models_tree(), o, p);
    return p;
  }();
  return presets;
}

Presets load_presets_override(const std::string& path) {
  namespace fs = std::filesystem;
  Presets p = builtin_presets();
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    const std::string g = path + "/gpus.json", m = path + "/model_presets.json";
    const bool has_g = fs::exists(g, ec), has_m = fs::exists(m, ec);
    if (!has_g && !has_m)
      throw Error(Field::presets,
                  "\"" + path + "\" is a directory that holds neither gpus.json nor model_presets.json");
    Presets o = parse_presets(has_g ? read_small_file(g, read_limit::k_presets) : "",
                              has_m ? read_small_file(m, read_limit::k_presets) : "", path);
    if (has_g) {
      p.gpus = o.gpus;
      p.default_gpus = o.default_gpus;
    }
    if (has_m) p.models = o.models;
    return with_defaults(std::move(p));
  }
  const std::string text = read_small_file(path, read_limit::k_presets, Field::presets);
  json doc = parse_doc(text, path);
  Presets o = parse_presets(doc.contains("gpus") ? text : "", doc.contains("models") ? text : "", path);
  if (!doc.contains("gpus") && !doc.contains("models"))
    throw Error(path, "needs a \"gpus\" or \"models\" array");
  if (doc.contains("gpus")) {
    p.gpus = o.gpus;
    p.default_gpus = o.default_gpus;
  }
  if (doc.contains("models")) p.models = o.models;
  return with_defaults(std::move(p));
}

const GpuSpec& find_gpu(const Presets& presets, std::string_view subject, std::string_view name) {
  const std::string key = to_lower(name);
  std::vector<std::string> names;
  for (const GpuSpec& g : presets.gpus) {
    if (to_lower(g.id) == key) return g;
    for (const std::string& a : g.aliases)
      if (to_lower(a) == key) return g;
    names.push_back(g.id);
  }
  for (const GpuSpec& g : presets.gpus) names.insert(names.end(), g.aliases.begin(), g.aliases.end());
  throw Error(std::string(subject), "\"" + std::string(name) + "\" is not a known GPU (see `memplan gpus`" +
                                        did_you_mean(name, names) + ")");
}

const ModelPreset& find_model(const Presets& presets, std::string_view subject, std::string_view name) {
  const std::string key = to_lower(name);
  std::vector<std::string> names;
  for (const ModelPreset& m : presets.models) {
    if (to_lower(m.model.id) == key) return m;
    for (const std::string& a : m.aliases)
      if (to_lower(a) == key) return m;
    names.push_back(m.model.id);
  }
  for (const ModelPreset& m : presets.models) names.insert(names.end(), m.aliases.begin(), m.aliases.end());
  throw Error(std::string(subject), "\"" + std::string(name) +
                                        "\" is not a known model (see `memplan models`" +
                                        did_you_mean(name, names) + ")");
}

}  // namespace memplan
