#include "core/models/arch_layout.hpp"

#include <string_view>

namespace memplan {
namespace {

// One family's layout, read from its Hugging Face modelling code.
struct Layout {
  std::string_view model_type;
  bool norm_first, parallel_attention, fused_qkv, final_norm, bias;
  std::string_view position_embedding;
};

// norm_first parallel fused final_norm bias positions
constexpr Layout k_layouts[] = {
    {"gpt2", true, false, true, true, true, "learned"},
    {"gpt_bigcode", true, false, true, true, true, "learned"},
    {"opt", true, false, false, true, true, "learned"},
    {"llama", true, false, false, true, false, "rotary"},
    {"mistral", true, false, false, true, false, "rotary"},
    {"mixtral", true, false, false, true, false, "rotary"},
    {"qwen2", true, false, false, true, false, "rotary"},  // q/k/v biases only
    {"qwen3", true, false, false, true, false, "rotary"},
    {"gemma", true, false, false, true, false, "rotary"},
    {"gemma2", true, false, false, true, false, "rotary"},
    {"phi3", true, false, true, true, false, "rotary"},
    {"phi", true, true, false, true, true, "rotary"},
    {"gpt_neox", true, true, true, true, true, "rotary"},
    {"gptj", true, true, false, true, false, "rotary"},
    {"falcon", true, true, true, true, false, "rotary"},
    {"bloom", true, false, true, true, true, "alibi"},
    {"mpt", true, false, true, true, false, "alibi"},
    {"bert", false, false, false, false, true, "learned"},
    {"roberta", false, false, false, false, true, "learned"},
    {"distilbert", false, false, false, false, true, "learned"},
    {"t5", true, false, false, true, false, "none"},  // relative position bias, not a table
    {"gemma3_text", true, false, false, true, false, "rotary"},
    {"olmo2", true, false, false, true, false, "rotary"},  // norms after attention and MLP
    {"cohere", true, true, false, true, false, "rotary"},
    {"glm4", true, false, false, true, false, "rotary"},  // q/k/v biases only
    {"starcoder2", true, false, false, true, true, "rotary"},
    {"phi-msft", true, true, true, true, true, "rotary"},
};

}  // namespace

bool apply_layout_defaults(TransformerArch& arch) {
  for (const Layout& l : k_layouts) {
    if (arch.model_type != l.model_type) continue;
    arch.norm_first = l.norm_first;
    arch.parallel_attention = l.parallel_attention;
    arch.fused_qkv = l.fused_qkv;
    arch.final_norm = l.final_norm;
    arch.bias = l.bias;
    arch.position_embedding = std::string(l.position_embedding);
    return true;
  }
  return false;
}

}  // namespace memplan
