// llamafactory: LLaMA-Factory, a Trainer configured by its arguments' defaults (0.9.5).
#include "core/profiles/profiles.hpp"

namespace memplan::profiles {

FrameworkProfile llamafactory() {
  FrameworkProfile p;
  p.framework = Framework::llamafactory;
  p.release = "LLaMA-Factory 0.9.5 on transformers' Trainer";
  p.runs = "LLaMA-Factory (a Trainer)";
  p.optimizer_loop = {OptimizerLoop::fused,
                      "LLaMA-Factory 0.9.5 hparams/training_args.py keeps transformers' optim default, "
                      "adamw_torch_fused on torch >= 2.8"};
  p.optimizer_loop_from_torch[0] = 2;
  p.optimizer_loop_from_torch[1] = 8;
  p.keep_logits = {false,
                   "a Trainer: compute_loss returns the loss only (transformers trainer.py training_step)"};
  p.checkpointing = {Checkpointing::full,
                     "LLaMA-Factory 0.9.5 hparams/model_args.py: disable_gradient_checkpointing False, "
                     "use_reentrant_gc True"};
  p.lora_fp32 = {true,
                 "LLaMA-Factory 0.9.5 model/adapter.py: trainable parameters cast to fp32 unless pure_bf16"};
  p.lora_dropout = {0.0, "LLaMA-Factory 0.9.5 hparams/finetuning_args.py: lora_dropout 0.0"};
  p.lora_targets = {
      "q,k,v,o,gate,up,down",
      "LLaMA-Factory 0.9.5 hparams/finetuning_args.py: lora_target \"all\", every Linear but the LM "
      "head (model_utils/misc.py find_all_linear_modules)"};
  p.autocast_over_half = {true,
                          "LLaMA-Factory 0.9.5 loads the weights in the compute dtype and trains with the "
                          "transformers Trainer, bf16: true enabling its autocast"};
  p.weight_load = {WeightLoad::transformers_bnb, k_transformers_bnb_load};
  return p;
}

}  // namespace memplan::profiles
