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

}  // namespace memplan::detail
