// hf: transformers' model code and peft in a training loop of the user's own. memplan's own
// defaults are this user's: torch.optim.AdamW as constructed (foreach on CUDA), the loss the model
// computes from labels, peft's LoraConfig (lora_dropout 0.0, autocast_adapter_dtype=True: fp32
// adapters), no checkpointing unless asked. Beyond them the profile names how from_pretrained loads 4-bit
// weights.
#include "core/profiles/profiles.hpp"

namespace memplan::profiles {

FrameworkProfile hf() {
  FrameworkProfile p;
  p.framework = Framework::hf;
  p.release = "transformers 5.24.0, peft 0.21.2";
  p.runs = "transformers + peft in a loop of your own";
  p.weight_load = {WeightLoad::transformers_bnb, k_transformers_bnb_load};
  return p;
}

}  // namespace memplan::profiles
