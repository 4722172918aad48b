// axolotl: a Trainer configured by its YAML schema's defaults (axolotl 0.19.0).
#include "core/profiles/profiles.hpp"

namespace memplan::profiles {

FrameworkProfile axolotl() {
  FrameworkProfile p;
  p.framework = Framework::axolotl;
  p.release = "axolotl 0.19.0 on transformers' Trainer";
  p.runs = "axolotl (a Trainer)";
  p.optimizer_loop = {OptimizerLoop::fused,
                      "axolotl 0.19.0 utils/schemas/training.py: optimizer defaults to adamw_torch_fused"};
  p.keep_logits = {false,
                   "a Trainer: compute_loss returns the loss only (transformers trainer.py training_step)"};
  p.lora_dropout = {0.0, "axolotl 0.19.0 utils/schemas/peft.py: lora_dropout defaults to 0.0"};
  p.autocast_over_half = {true,
                          "axolotl 0.19 loads the weights in the training dtype and trains with the "
                          "transformers Trainer, bf16: true enabling its autocast"};
  p.weight_load = {WeightLoad::transformers_bnb, k_transformers_bnb_load};
  return p;
}

}  // namespace memplan::profiles
