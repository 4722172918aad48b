#pragma once
// config.json families of today's dense decoders (hf_config_dense_families.cpp): qwen3, gemma2,
// gemma3_text, phi (and the older phi-msft remote code), starcoder2, cohere, olmo2, glm4. Each
// follows its transformers modelling code; checked against published counts in
// tests/unit/test_hf_config_dense_families.cpp.

#include <string>
#include <string_view>

#include "core/models/hf_config_reader.hpp"
#include "core/models/parameter_count.hpp"

namespace memplan::detail {

// The layout facts of these families that TransformerArch does not state (norms per layer, q/k
// norms, an output bias, fused gate_up), by model_type; layout_of() applies them, so presets and
// config.json files count alike.
void apply_dense_family(std::string_view model_type, const TransformerArch& arch, ParameterLayout& layout);

FamilyCount count_qwen3(ConfigReader& c, const std::string& model_type);
FamilyCount count_gemma2(ConfigReader& c, const std::string& model_type);
FamilyCount count_gemma3_text(ConfigReader& c, const std::string& model_type);
FamilyCount count_phi(ConfigReader& c, const std::string& model_type);
FamilyCount count_starcoder2(ConfigReader& c, const std::string& model_type);
FamilyCount count_cohere(ConfigReader& c, const std::string& model_type);
FamilyCount count_olmo2(ConfigReader& c, const std::string& model_type);
FamilyCount count_glm4(ConfigReader& c, const std::string& model_type);

}  // namespace memplan::detail
