#include "core/models/hf_config.hpp"

#include <cmath>
#include <utility>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/file_reader.hpp"

#include "core/base/json_text.hpp"
#include "core/models/hf_config_dense_families.hpp"
#include "core/models/hf_config_reader.hpp"
#include "core/models/hf_config_vision.hpp"
#include "core/models/quantization_config.hpp"

namespace memplan {
namespace detail {

namespace {
constexpr uint64_t k_max_dimension = 1ull << 32;

// Sanity limits of the architecture fields: far above every real model (the largest seen:
// hidden 18,432, intermediate 73,728, 126 layers, 128 heads, head_dim 256, vocab 256,000,
// 256 experts), so a value beyond one is a broken config, not a model. Other counts: 2^32.
struct FieldLimit {
  const char* keys[6];  // the config.json names of one field (unused slots null)
  uint64_t max;
};
const FieldLimit k_field_limits[] = {
    {{"hidden_size", "n_embd", "d_model", "word_embed_proj_dim"}, 1ull << 20},
    {{"intermediate_size", "n_inner", "ffn_dim", "d_ff", "ffn_hidden_size"}, 1ull << 22},
    {{"num_hidden_layers", "n_layer", "num_layers", "num_decoder_layers"}, 1ull << 16},
    {{"num_attention_heads", "n_head", "num_heads", "num_key_value_heads", "num_kv_heads", "n_head_kv"},
     1ull << 16},
    {{"head_dim", "d_kv"}, 1ull << 16},
    {{"vocab_size"}, 1ull << 24},
    {{"num_local_experts", "num_experts", "num_experts_per_tok", "num_experts_per_token"}, 1ull << 16},
    {{"type_vocab_size", "relative_attention_num_buckets", "num_ln_in_parallel_attn"}, 1ull << 16},
};

uint64_t limit_of(const std::string& key) {
  for (const FieldLimit& f : k_field_limits)
    for (const char* k : f.keys)
      if (k && key == k) return f.max;
  return k_max_dimension;
}

std::string keys_list(std::initializer_list<const char*> keys) {
  std::string s;
  size_t i = 0;
  for (const char* k : keys) {
    if (i) s += (i + 1 == keys.size()) ? " or " : ", ";
    s += std::string("\"") + k + "\"";
    ++i;
  }
  return s;
}
}  // namespace

bool ConfigReader::has(const char* key) const {
  auto it = m_j.find(key);
  return it != m_j.end() && !it->is_null();
}

const nlohmann::json* ConfigReader::find(std::initializer_list<const char*> keys, std::string& key_out) {
  for (const char* k : keys) {
    auto it = m_j.find(k);
    if (it == m_j.end() || it->is_null()) continue;
    key_out = k;
    m_used.emplace_back(k);
    return &*it;
  }
  return nullptr;
}

void ConfigReader::fail(const std::string& key, const std::string& message) const {
  throw Error(m_file + ": " + key, message);
}

std::optional<uint64_t> ConfigReader::count(std::initializer_list<const char*> keys) {
  std::string key;
  const nlohmann::json* v = find(keys, key);
  if (!v) return std::nullopt;
  uint64_t n = 0;
  if (v->is_number_unsigned())
    n = v->get<uint64_t>();
  else if (v->is_number_integer())
    fail(key, json_brief(*v) + " is negative (expected a whole number)");
  else if (v->is_number_float()) {
    double d = v->get<double>();
    if (!(d >= 0) || d != std::floor(d) || d > static_cast<double>(k_max_dimension))
      fail(key, json_brief(*v) + " is not a whole number up to 2^32");
    n = static_cast<uint64_t>(d);
  } else
    fail(key, json_brief(*v) + " is not a number (expected a whole number)");
  if (n > k_max_dimension) fail(key, group_thousands(n) + " is absurdly large (at most 2^32)");
  if (const uint64_t max = limit_of(key); n > max)
    fail(key, group_thousands(n) + " is absurdly large (at most " + group_thousands(max) + ")");
  return n;
}

uint64_t ConfigReader::need(std::initializer_list<const char*> keys) {
  if (auto v = count(keys)) {
    if (*v == 0) fail(m_used.back(), "is 0 (expected at least 1)");
    return *v;
  }
  throw Error(m_file, "missing " + keys_list(keys) + " (needed to count the parameters)");
}

uint64_t ConfigReader::count_or(std::initializer_list<const char*> keys, uint64_t fallback) {
  auto v = count(keys);
  return v ? *v : fallback;
}

std::optional<bool> ConfigReader::flag(std::initializer_list<const char*> keys) {
  std::string key;
  const nlohmann::json* v = find(keys, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) fail(key, json_brief(*v) + " is not true or false");
  return v->get<bool>();
}

bool ConfigReader::flag_or(std::initializer_list<const char*> keys, bool fallback) {
  auto v = flag(keys);
  return v ? *v : fallback;
}

std::optional<double> ConfigReader::real(std::initializer_list<const char*> keys) {
  std::string key;
  const nlohmann::json* v = find(keys, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) fail(key, json_brief(*v) + " is not a number");
  return v->get<double>();
}

std::optional<std::string> ConfigReader::text(std::initializer_list<const char*> keys) {
  std::string key;
  const nlohmann::json* v = find(keys, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) fail(key, json_brief(*v) + " is not a string");
  return v->get<std::string>();
}

bool tied_embeddings(ConfigReader& c, const std::string& model_type, std::vector<std::string>& notes) {
  if (auto t = c.flag({"tie_word_embeddings"})) return *t;
  static const char* untied[] = {"llama", "mistral", "mixtral", "qwen2", "phi3", "gpt_neox"};
  for (const char* u : untied)
    if (model_type == u) {
      notes.push_back("no tie_word_embeddings: " + model_type + " defaults to an untied lm_head");
      return false;
    }
  notes.push_back("no tie_word_embeddings: " + model_type + " defaults to lm_head tied to the embeddings");
  return true;
}

}  // namespace detail

namespace {

using detail::ConfigReader;
using detail::FamilyFn;

struct Family {
  const char* model_type;
  const char* formula;
  FamilyFn fn;
};

const std::vector<Family>& families() {
  static const std::vector<Family> table = {
      {"llama", "llama-style decoder", detail::count_gated_decoder},
      {"mistral", "llama-style decoder", detail::count_gated_decoder},
      {"mixtral", "llama-style decoder (MoE)", detail::count_gated_decoder},
      {"qwen2", "llama-style decoder", detail::count_gated_decoder},
      {"gemma", "llama-style decoder", detail::count_gated_decoder},
      {"phi3", "llama-style decoder", detail::count_gated_decoder},
      {"gpt2", "gpt2", detail::count_gpt2},
      {"bert", "bert encoder", detail::count_bert},
      {"roberta", "bert encoder", detail::count_bert},
      {"t5", "t5 encoder-decoder", detail::count_t5},
      {"opt", "opt", detail::count_opt},
      {"gpt_neox", "gpt_neox", detail::count_gpt_neox},
      {"falcon", "falcon", detail::count_falcon},
      {"RefinedWebModel", "falcon", detail::count_falcon},
      {"RefinedWeb", "falcon", detail::count_falcon},
      {"qwen3", "qwen3 (q/k norms)", detail::count_qwen3},
      {"gemma2", "gemma2 (4 norms per layer)", detail::count_gemma2},
      {"gemma3_text", "gemma3 text (4 norms, q/k norms)", detail::count_gemma3_text},
      {"phi", "phi (parallel block)", detail::count_phi},
      {"phi-msft", "phi (parallel block)", detail::count_phi},
      {"starcoder2", "starcoder2", detail::count_starcoder2},
      {"cohere", "cohere (parallel block)", detail::count_cohere},
      {"olmo2", "olmo2 (post-norms, q/k norms)", detail::count_olmo2},
      {"glm4", "glm4 (4 norms per layer)", detail::count_glm4},
      {"llava", "llava (vision tower + projector + language model)", detail::count_llava},
      {"gemma3", "gemma3 (vision tower + projector + language model)", detail::count_gemma3},
      {"qwen2_moe", "qwen2_moe (fine-grained MoE)", detail::count_qwen_moe},
      {"qwen3_moe", "qwen3_moe (fine-grained MoE)", detail::count_qwen_moe},
      {"deepseek_v2", "deepseek (MLA, fine-grained MoE)", detail::count_deepseek},
      {"deepseek_v3", "deepseek (MLA, fine-grained MoE)", detail::count_deepseek},
      {"olmoe", "olmoe (MoE)", detail::count_olmoe},
      {"phimoe", "phimoe (MoE)", detail::count_phimoe},
      {"gpt_oss", "gpt_oss (MoE)", detail::count_gpt_oss},
      {"llama4_text", "llama4 text (MoE)", detail::count_llama4_text},
      {"qwen2_vl", "qwen2_vl (vision tower + merger + qwen2 language model)", detail::count_qwen2_vl},
      {"qwen2_5_vl", "qwen2_5_vl (vision tower + merger + qwen2 language model)", detail::count_qwen2_vl},
      {"mllama", "mllama (vision tower + projector + language model with cross-attention)",
       detail::count_mllama},
      {"llama4", "llama4 (vision tower + projector + MoE language model)", detail::count_llama4},
  };
  return table;
}

// Old configs (the first gpt2-medium upload, RefinedWeb falcon) lack model_type: infer it from
// the class name in "architectures".
std::string infer_model_type(ConfigReader& c, std::vector<std::string>& notes) {
  if (auto mt = c.text({"model_type"})) return *mt;
  const nlohmann::json& j = c.json();
  auto it = j.find("architectures");
  if (it != j.end() && it->is_array() && !it->empty() && (*it)[0].is_string()) {
    std::string arch = (*it)[0].get<std::string>();
    static const std::pair<const char*, const char*> prefixes[] = {{"Qwen2Moe", "qwen2_moe"},
                                                                   {"Qwen3Moe", "qwen3_moe"},
                                                                   {"DeepseekV2", "deepseek_v2"},
                                                                   {"DeepseekV3", "deepseek_v3"},
                                                                   {"Olmoe", "olmoe"},
                                                                   {"Phimoe", "phimoe"},
                                                                   {"GptOss", "gpt_oss"},
                                                                   {"GPT2", "gpt2"},
                                                                   {"Bert", "bert"},
                                                                   {"Roberta", "roberta"},
                                                                   {"T5", "t5"},
                                                                   {"Llama", "llama"},
                                                                   {"Mistral", "mistral"},
                                                                   {"Mixtral", "mixtral"},
                                                                   {"Qwen2", "qwen2"},
                                                                   {"Gemma", "gemma"},
                                                                   {"Phi3", "phi3"},
                                                                   {"OPT", "opt"},
                                                                   {"GPTNeoX", "gpt_neox"},
                                                                   {"Falcon", "falcon"},
                                                                   {"RW", "falcon"}};
    for (const auto& [prefix, mt] : prefixes)
      if (arch.rfind(prefix, 0) == 0) {
        notes.push_back(std::string("no model_type: inferred \"") + mt + "\" from architectures[0] \"" +
                        arch + "\"");
        return mt;
      }
  }
  return "";
}

void read_weight_format(ConfigReader& c, ModelSpec& m, const detail::FamilyCount& fc) {
  std::string torch_format;
  if (auto dt = c.text({"torch_dtype", "dtype"})) {
    m.weight_format = storage_format_of_torch_dtype(*dt);
    torch_format = m.weight_format;
    if (m.weight_format.empty())
      m.notes.push_back("torch_dtype \"" + *dt + "\" is not a format memplan knows");
    else
      m.notes.push_back("weights stored as " + m.weight_format + " (torch_dtype \"" + *dt + "\")");
  } else {
    m.notes.push_back(
        "no torch_dtype: the stored format is unknown (older configs that omit it were saved in fp32)");
  }
  // quantization_config: the checkpoint's exact bytes (quantization_config.cpp).
  if (c.has("quantization_config") && fc.arch.encoder_decoder)
    throw Error(c.file() + ": quantization_config", "memplan counts quantised decoder checkpoints only");
  auto q = detail::read_quantization_config(c.json(), c.file(), detail::linear_groups(fc.arch, fc.layout),
                                            fc.total.v, torch_format);
  if (!q) return;
  m.weight_format = q->format;
  m.weight_bytes = q->bytes;
  for (std::string& n : q->notes) m.notes.push_back("quantization_config: " + n);
}

}  // namespace

const std::vector<std::string>& hf_model_types() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Family& f : families()) v.emplace_back(f.model_type);
    return v;
  }();
  return names;
}

const std::vector<std::string>& hf_generic_fields() {
  static const std::vector<std::string> v = {"hidden_size", "num_hidden_layers", "num_attention_heads",
                                             "intermediate_size", "vocab_size"};
  return v;
}

std::string storage_format_of_torch_dtype(std::string_view torch_dtype) {
  std::string_view t = torch_dtype;
  if (t.rfind("torch.", 0) == 0) t.remove_prefix(6);
  static const std::pair<const char*, const char*> table[] = {
      {"float32", "fp32"},         {"float", "fp32"},   {"float16", "fp16"}, {"half", "fp16"},
      {"bfloat16", "bf16"},        {"float64", "fp64"}, {"double", "fp64"},  {"float8_e4m3fn", "fp8-e4m3"},
      {"float8_e5m2", "fp8-e5m2"}, {"int8", "int8"}};
  for (const auto& [from, to] : table)
    if (t == from) return to;
  return "";
}

HfConfig parse_hf_config_detail(std::string_view json_text, std::string_view file_name,
                                const ModelReadOptions& options) {
  std::string file(file_name);
  if (json_text.size() > k_max_config_bytes)
    throw Error(file, "is larger than " + std::to_string(k_max_config_bytes) + " bytes (not a config.json)");
  nlohmann::json j = detail::parse_json_text(json_text, file, "the config");
  if (!j.is_object()) throw Error(file, "is not a JSON object (expected a Hugging Face config.json)");

  ConfigReader c(j, file);
  HfConfig out;
  ModelSpec& m = out.model;
  std::vector<std::string> notes;
  std::string model_type = infer_model_type(c, notes);

  const Family* fam = nullptr;
  for (const Family& f : families())
    if (model_type == f.model_type) fam = &f;

  detail::FamilyCount fc;
  if (fam) {
    fc = fam->fn(c, model_type);
    out.family = fam->formula;
    if (!fc.attention_read) detail::read_attention_kinds(c, model_type, fc);
  } else {
    std::string shown = model_type.empty() ? "no model_type" : "model_type \"" + model_type + "\"";
    std::string all;
    for (size_t i = 0; i < hf_model_types().size(); ++i) all += (i ? ", " : "") + hf_model_types()[i];
    if (!options.assume_llama)
      throw Error(file, shown + " is not one memplan knows (" + all +
                            "); to count it as a llama-style decoder " + "anyway, give " +
                            field_ref(Field::assume_llama));
    std::vector<std::string> missing;
    for (const std::string& f : hf_generic_fields())
      if (!c.has(f.c_str())) missing.push_back(f);
    if (!missing.empty()) {
      std::string need;
      for (size_t i = 0; i < missing.size(); ++i) need += (i ? ", " : "") + missing[i];
      throw Error(file,
                  shown + " is not one memplan knows, and the generic fields of a llama-style count are " +
                      "missing: " + need + " (needed, with num_key_value_heads and head_dim if they apply)");
    }
    fc = detail::count_gated_decoder(c, model_type.empty() ? "unknown" : model_type);
    out.family = "assumed llama-style decoder";
    m.assumption =
        shown + " is not one memplan knows: counted as a llama-style decoder (SwiGLU MLP, RMSNorm, " +
        "no biases) from the generic fields hidden_size, num_hidden_layers, num_attention_heads, " +
        "intermediate_size, vocab_size, as " + field_ref(Field::assume_llama) + " asked";
    notes.push_back(m.assumption);
  }

  m.id = file;
  m.name = model_type.empty() ? file : model_type;
  if (auto n = c.text({"_name_or_path"}); n && !n->empty()) m.name = *n;
  m.source = file;
  m.parameters = fc.total.v;
  m.active_parameters = fc.active.v;
  m.mtp_parameters = fc.mtp;
  m.layer_kinds = detail::layer_kinds(fc);
  m.layer_kinds.insert(m.layer_kinds.end(), fc.parts.begin(), fc.parts.end());
  m.image_token_pixels = fc.image_token_pixels;
  m.tensors = fc.tensors.v;
  m.image_tokens = fc.image_tokens;
  m.image_tile_tokens = fc.image_tile_tokens;
  m.max_image_tiles = fc.max_image_tiles;
  m.image_tile_pixels = fc.image_tile_pixels;
  m.vision = fc.vision;
  fc.arch.model_type = model_type.empty() ? "unknown" : model_type;
  m.arch = fc.arch;
  // transformers' ACT2FN["gelu_new"] is NewGELUActivation, written out in Python ops.
  m.arch->python_gelu = m.arch->activation == "gelu_new";
  read_weight_format(c, m, fc);
  m.notes.insert(m.notes.begin(), notes.begin(), notes.end());
  m.notes.insert(m.notes.end(), fc.notes.begin(), fc.notes.end());
  out.fields = c.used();
  return out;
}

HfConfig read_hf_config_detail(const std::string& path, const ModelReadOptions& options) {
  std::string file = is_directory(path) ? join_path(path, "config.json") : path;
  std::string text = read_small_file(file, k_max_config_bytes);
  return parse_hf_config_detail(text, file, options);
}

ModelSpec read_hf_config(const std::string& path, const ModelReadOptions& options) {
  return read_hf_config_detail(path, options).model;
}

}  // namespace memplan
