#include "core/memory/hf_release_rules.hpp"

namespace memplan::detail {
namespace {

// Families whose eager attention is the Llama template's eager_attention_forward (or a copy of
// it): softmax(w, dim=-1, dtype=torch.float32).to(query.dtype). GPT-2, BERT, RoBERTa, Falcon and
// the other older families take the softmax in the scores' own format. OPT and GPT-NeoX joined
// the template in 4.49 (4.49.0 models/opt/modeling_opt.py and models/gpt_neox/modeling_gpt_neox.py).
const char* const k_llama_template[] = {
    "llama",  "mistral", "mixtral",     "qwen2",      "qwen2_moe",   "qwen3",       "qwen3_moe",
    "gemma",  "gemma2",  "gemma3_text", "gemma3",     "phi3",        "phimoe",      "olmo2",
    "olmoe",  "cohere",  "glm4",        "starcoder2", "deepseek_v2", "deepseek_v3", "llama4_text",
    "llama4", "llava",   "qwen2_vl",    "qwen2_5_vl", "mllama"};

bool llama_template(const std::string& model_type) {
  for (const char* t : k_llama_template)
    if (model_type == t) return true;
  return false;
}

// The families whose loss moved to self.loss_function (ForCausalLMLoss) later than the Llama
// family's 4.46, with the release: GPT-2 and OPT in 4.48.0, GPT-NeoX in 4.49.0.
uint32_t own_loss_until(const std::string& model_type) {
  if (model_type == "gpt2" || model_type == "opt") return 4048;
  if (model_type == "gpt_neox") return 4049;
  return 0;
}

}  // namespace

HfLossRule hf_loss_rule(const std::string& model_type, TransformersRelease release) {
  HfLossRule r;
  r.shifted_copy = release.before(4, 49);
  if (const uint32_t until = own_loss_until(model_type); until && release.value() < until) {
    r.upcast = false;  // CrossEntropyLoss()(shift_logits, shift_labels) in the model's format
    return r;
  }
  if (model_type == "llama" && release.before(4, 31)) {
    r.upcast = false;  // 4.30 LlamaForCausalLM.forward: no logits.float()
    return r;
  }
  // 4.31 to 4.45: `logits = logits.float()` in the Llama family's forward; the half tensor has no
  // other reference and goes at once.
  r.half_dropped = llama_template(model_type) && release.before(4, 46);
  return r;
}

bool hf_eager_softmax_fp32(const std::string& model_type, TransformersRelease release, bool fp16) {
  if (model_type == "opt") return release.before(4, 49) ? fp16 : true;
  if (model_type == "gpt_neox") return !release.before(4, 49);
  return llama_template(model_type);
}

bool hf_eager_max_keeps_scores(const std::string& model_type, TransformersRelease release) {
  return model_type == "opt" && release.before(4, 49);
}

std::optional<TransformersRelease> hf_first_sdpa(const std::string& model_type) {
  static const struct {
    const char* type;
    uint32_t minor;  // of 4.x
  } k_first[] = {{"llama", 36}, {"mistral", 37}, {"mixtral", 37},  {"qwen2", 37}, {"gemma", 38},
                 {"bert", 41},  {"gpt2", 42},    {"gpt_neox", 42}, {"phi3", 45},  {"opt", 46}};
  for (const auto& f : k_first)
    if (model_type == f.type) return TransformersRelease{4, f.minor};
  return std::nullopt;
}

}  // namespace memplan::detail
