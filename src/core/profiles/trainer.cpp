// trainer: transformers' Trainer with TrainingArguments' defaults.
#include "core/profiles/profiles.hpp"

namespace memplan::profiles {

FrameworkProfile trainer() {
  FrameworkProfile p;
  p.framework = Framework::trainer;
  p.release = "transformers 5.24.0";
  p.runs = "transformers' Trainer";
  p.optimizer_loop = {
      OptimizerLoop::fused,
      "transformers 5.24.0 training_args.py: optim defaults to adamw_torch_fused on torch >= 2.8 "
      "(torch.optim.AdamW(fused=True))"};
  p.optimizer_loop_from_torch[0] = 2;
  p.optimizer_loop_from_torch[1] = 8;
  p.optimizer_loop_from_transformers[0] = 4;  // huggingface/transformers#37358, first in 4.54.0
  p.optimizer_loop_from_transformers[1] = 54;
  p.keep_logits = {false,
                   "transformers 5.24.0 trainer.py training_step: compute_loss returns the loss only, the "
                   "outputs go before backward"};
  p.autocast_over_half = {true,
                          "transformers 5.24 Trainer: bf16=True / fp16=True enables accelerate's autocast "
                          "(Accelerator(mixed_precision)) whatever dtype the model loaded in"};
  p.weight_load = {WeightLoad::transformers_bnb, k_transformers_bnb_load};
  return p;
}

}  // namespace memplan::profiles
