// trl: TRL's SFTTrainer (a Trainer) with SFTConfig's defaults.
#include "core/profiles/profiles.hpp"

namespace memplan::profiles {

FrameworkProfile trl() {
  FrameworkProfile p;
  p.framework = Framework::trl;
  p.release = "trl 1.16.0 on transformers 5.24.0";
  p.runs = "TRL's SFTTrainer";
  p.optimizer_loop = {
      OptimizerLoop::fused,
      "transformers 5.24.0 training_args.py: optim defaults to adamw_torch_fused on torch >= 2.8, "
      "which SFTConfig keeps"};
  p.optimizer_loop_from_torch[0] = 2;
  p.optimizer_loop_from_torch[1] = 8;
  p.optimizer_loop_from_transformers[0] = 4;  // huggingface/transformers#37358, first in 4.54.0
  p.optimizer_loop_from_transformers[1] = 54;
  p.keep_logits = {false, "trl 1.16.0 sft_trainer.py compute_loss: only the loss outlives the forward"};
  p.checkpointing = {
      Checkpointing::full,
      "trl 1.16.0 trainer/sft_config.py: gradient_checkpointing defaults to True (use_reentrant "
      "False, sft_trainer.py)"};
  p.loss = {Loss::logprob,
            "trl 1.16.0 trainer/utils.py add_fused_lm_head, kernels/chunked_logprob.py: per-token log-probs "
            "through the LM head in 4096-token x 32768-vocab tiles, no logits"};
  p.autocast_over_half = {true,
                          "trl 1.16 SFTTrainer is a transformers Trainer: bf16=True enables accelerate's "
                          "autocast over the loaded model"};
  p.weight_load = {WeightLoad::transformers_bnb, k_transformers_bnb_load};
  return p;
}

}  // namespace memplan::profiles
