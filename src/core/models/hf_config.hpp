#pragma once
// A Hugging Face config.json: parameter count (total and, for MoE, active per token), parameter
// tensor count and architecture, computed from the config fields alone (no weights read).
// Families: llama, mistral, mixtral, qwen2, gemma, phi3, gpt2, bert, roberta, t5, opt,
// gpt_neox, falcon (also its legacy RefinedWebModel configs), and with fine-grained experts
// qwen2_moe, qwen3_moe, deepseek_v2/v3, olmoe, phimoe, gpt_oss, llama4_text. An unknown
// model_type is refused (Error naming it) unless ModelReadOptions::assume_llama, which counts it
// as a llama-style decoder from the generic fields and names that assumption.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <memplan/model.hpp>
#include "core/base/file_reader.hpp"

namespace memplan {

// What was read from a config.json, beyond the ModelSpec.
struct HfConfig {
  ModelSpec model;
  std::string family;               // formula used: "llama-style decoder", "gpt2", "bert", ...
  std::vector<std::string> fields;  // config keys memplan read, in reading order
};

// Largest config.json memplan reads (real ones are 0.5-10 kB).
constexpr uint64_t k_max_config_bytes = read_limit::k_config;

// Parses config.json text; `file_name` names the file in errors ("x/config.json: hidden_size: ...").
HfConfig parse_hf_config_detail(std::string_view json_text, std::string_view file_name,
                                const ModelReadOptions& options = {});

// Reads `path` (a config.json, or a directory holding one).
HfConfig read_hf_config_detail(const std::string& path, const ModelReadOptions& options = {});
ModelSpec read_hf_config(const std::string& path, const ModelReadOptions& options = {});

// The model_type values with their own formula.
const std::vector<std::string>& hf_model_types();

// The fields an unknown model_type needs for the generic (llama-style) count.
const std::vector<std::string>& hf_generic_fields();

// Storage-format name for a torch dtype string: "bfloat16" -> "bf16", "float32" -> "fp32"; "" if unknown.
std::string storage_format_of_torch_dtype(std::string_view torch_dtype);

}  // namespace memplan
