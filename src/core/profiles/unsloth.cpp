// unsloth: FastLanguageModel's patched transformers models and its get_peft_model defaults.
#include "core/profiles/profiles.hpp"

namespace memplan::profiles {

FrameworkProfile unsloth() {
  FrameworkProfile p;
  p.framework = Framework::unsloth;
  p.release = "unsloth 2026.10.9, unsloth_zoo 2026.10.9";
  p.runs = "unsloth's patched transformers models";
  p.loss = {
      Loss::fused,
      "unsloth 2026.10.9 models/llama.py: unsloth_fused_ce_loss on the hidden states and the LM head "
      "(unsloth_zoo fused_losses/cross_entropy_loss.py: by chunks, the input's gradient made in forward), "
      "no logits returned"};
  p.lora_fp32 = {
      true,
      "unsloth_zoo 2026.10.9 training_utils.py prepare_model_for_training(float32_mixed_precision=True): "
      "lora_A and lora_B upcast to fp32"};
  p.lora_dropout = {0.0, "unsloth 2026.10.9 models/llama.py FastLlamaModel.get_peft_model: lora_dropout=0.0"};
  p.lora_targets = {
      "q,k,v,o,gate,up,down",
      "unsloth 2026.10.9 models/llama.py get_peft_model: target_modules q,k,v,o,gate,up,down_proj"};
  p.checkpointing = {Checkpointing::full,
                     "unsloth 2026.10.9 models/loader.py from_pretrained and get_peft_model: "
                     "use_gradient_checkpointing=\"unsloth\""};
  p.offloaded_checkpoints = {
      true,
      "unsloth_zoo 2026.10.9 gradient_checkpointing.py UnslothCheckpointFunction: each "
      "layer's input to pinned CPU buffers, the last one's kept, two GPU reload buffers"};
  p.weight_load = {WeightLoad::transformers_bnb, k_transformers_bnb_load};
  return p;
}

}  // namespace memplan::profiles
