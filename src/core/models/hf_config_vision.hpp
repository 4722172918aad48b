#pragma once
// Vision-language config.json files (hf_config_vision.cpp): a language model (text_config), a
// vision tower (vision_config) and the projector between them, each counted and named, and the
// language-model tokens one image becomes.

#include <string>

#include "core/models/hf_config_reader.hpp"

namespace memplan::detail {

// llava (LlavaForConditionalGeneration, LLaVA-1.5): CLIP vision tower, a two-layer MLP projector,
// a llama-style language model.
FamilyCount count_llava(ConfigReader& c, const std::string& model_type);

// gemma3 (Gemma3ForConditionalGeneration): SigLIP vision tower, an RMSNorm + matrix projector,
// the gemma3_text language model; mm_tokens_per_image tokens per image.
FamilyCount count_gemma3(ConfigReader& c, const std::string& model_type);

// qwen2_vl / qwen2_5_vl (hf_config_vision_qwen.cpp): a Qwen2 language model (top-level fields or
// text_config), the vision transformer and the patch merger; dynamic resolution.
FamilyCount count_qwen2_vl(ConfigReader& c, const std::string& model_type);

// mllama (hf_config_vision_mllama.cpp, Llama 3.2 Vision): a tiled vision encoder with gated
// positional embeddings and gated global layers, a projector, and a llama language model with
// gated cross-attention layers.
FamilyCount count_mllama(ConfigReader& c, const std::string& model_type);

// llama4 (hf_config_vision_llama4.cpp): the llama4_text MoE language model (text_config), the
// vision encoder with its pixel-shuffle adapter, and the projector.
FamilyCount count_llama4(ConfigReader& c, const std::string& model_type);

}  // namespace memplan::detail
