#pragma once
// Internal to hf_config*.cpp: typed, validated access to config.json fields, and overflow-checked
// counts so that parameter formulas read like the arithmetic they are.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/checked.hpp"
#include "core/models/hf_config.hpp"
#include "core/models/parameter_count.hpp"

namespace memplan::detail {

// A parameter count; + and * throw OverflowError instead of wrapping.
struct Count {
  uint64_t v = 0;
  Count(uint64_t x = 0) : v(x) {}  // NOLINT: implicit on purpose, formulas mix literals and counts
};
inline Count operator+(Count a, Count b) { return {checked_add(a.v, b.v, "parameter count")}; }
inline Count operator*(Count a, Count b) { return {checked_mul(a.v, b.v, "parameter count")}; }

// One config.json object; every read records the key it used.
class ConfigReader {
 public:
  ConfigReader(const nlohmann::json& j, std::string file) : m_j(j), m_file(std::move(file)) {}

  // Present and not null.
  bool has(const char* key) const;
  // First present key of `keys` as a whole number in [0, 2^32], or nullopt.
  std::optional<uint64_t> count(std::initializer_list<const char*> keys);
  // Like count() but required: Error naming every accepted key when none is present.
  uint64_t need(std::initializer_list<const char*> keys);
  // count() or `fallback`.
  uint64_t count_or(std::initializer_list<const char*> keys, uint64_t fallback);
  std::optional<bool> flag(std::initializer_list<const char*> keys);
  bool flag_or(std::initializer_list<const char*> keys, bool fallback);
  std::optional<double> real(std::initializer_list<const char*> keys);
  std::optional<std::string> text(std::initializer_list<const char*> keys);

  const nlohmann::json& json() const { return m_j; }
  const std::string& file() const { return m_file; }
  const std::vector<std::string>& used() const { return m_used; }
  // Error about `key`: "<file>: <key>: <message>".
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

 private:
  const nlohmann::json* find(std::initializer_list<const char*> keys, std::string& key_out);
  const nlohmann::json& m_j;
  std::string m_file;
  std::vector<std::string> m_used;
};

// A family's result: counts plus the architecture.
struct FamilyCount {
  Count total;
  Count active;   // MoE only (0 otherwise)
  Count tensors;  // parameter tensors
  TransformerArch arch;
  std::vector<std::string> notes;
  ParameterLayout layout;     // how the family builds its blocks (quantization_config.cpp reads it)
  uint64_t image_tokens = 0;  // vision-language models: language-model tokens per image
  std::string mlp_fields;     // config fields that decided which layers are dense or MoE
  uint64_t mtp = 0;           // multi-token-prediction parameters (not in total)
  // Vision-language models (hf_config_vision*.cpp):
  uint64_t image_token_pixels =
      0;                         // dynamic resolution: one token per this many pixels a side (Qwen2-VL: 28)
  bool attention_read = false;   // the family read the attention kinds itself (from text_config)
  std::vector<LayerKind> parts;  // rows for inspect beyond the decoder's: vision tower, projector, ...
  // Tiled vision encoders (mllama): features per tile, tiles per image, tile side in pixels.
  uint64_t image_tile_tokens = 0, max_image_tiles = 0, image_tile_pixels = 0;
  std::optional<VisionTower> vision;  // the tower the training ledger counts (CLIP, SigLIP)
};

using FamilyFn = FamilyCount (*)(ConfigReader& c, const std::string& model_type);

// hf_config_families.cpp
FamilyCount count_gated_decoder(ConfigReader& c, const std::string& model_type);
FamilyCount count_gpt2(ConfigReader& c, const std::string& model_type);
FamilyCount count_bert(ConfigReader& c, const std::string& model_type);
FamilyCount count_t5(ConfigReader& c, const std::string& model_type);
FamilyCount count_opt(ConfigReader& c, const std::string& model_type);
FamilyCount count_gpt_neox(ConfigReader& c, const std::string& model_type);
FamilyCount count_falcon(ConfigReader& c, const std::string& model_type);

// hf_config_moe.cpp: fine-grained mixture of experts and latent attention
FamilyCount count_qwen_moe(ConfigReader& c, const std::string& model_type);
FamilyCount count_deepseek(ConfigReader& c, const std::string& model_type);
FamilyCount count_olmoe(ConfigReader& c, const std::string& model_type);
FamilyCount count_phimoe(ConfigReader& c, const std::string& model_type);
FamilyCount count_gpt_oss(ConfigReader& c, const std::string& model_type);
FamilyCount count_llama4_text(ConfigReader& c, const std::string& model_type);

// hf_config_attention.cpp: which layers attend to a window (layer_types, sliding_window and each
// family's interleaving rule), q/k norms, soft-capping and sinks read; the per-kind rows.
void read_attention_kinds(ConfigReader& c, const std::string& model_type, FamilyCount& r);
std::vector<LayerKind> layer_kinds(const FamilyCount& r);

// tie_word_embeddings, or the model class default (True for gpt2/t5/opt/falcon/gemma/bert, False
// for llama/mistral/mixtral/qwen2/phi3/gpt_neox), with a note when the default was used.
bool tied_embeddings(ConfigReader& c, const std::string& model_type, std::vector<std::string>& notes);

}  // namespace memplan::detail
