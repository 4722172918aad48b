// torchtune: its single-device recipes with the configs it ships (recipes/configs/llama3_1/
// 8B_lora_single_device.yaml and its siblings).
#include "core/profiles/profiles.hpp"

namespace memplan::profiles {

FrameworkProfile torchtune() {
  FrameworkProfile p;
  p.framework = Framework::torchtune;
  p.release = "torchtune 0.6.1";
  p.runs = "torchtune's single-device recipes";
  p.loss = {Loss::chunked,
            "torchtune 0.6.1 modules/loss/ce_chunked_output_loss.py CEWithChunkedOutputLoss: the output in 8 "
            "chunks, each upcast to fp32 for cross-entropy"};
  p.lora_fp32 = {
      false,
      "torchtune 0.6.1 recipes/lora_finetune_single_device.py: the model, adapters included, is built "
      "under set_default_dtype(dtype)"};
  p.lora_dropout = {0.0,
                    "torchtune 0.6.1 recipes/configs/llama3_1/8B_lora_single_device.yaml: lora_dropout 0.0"};
  p.lora_targets = {"q,v,o,gate,up,down",
                    "torchtune 0.6.1 recipes/configs/llama3_1/8B_lora_single_device.yaml: lora_attn_modules "
                    "[q_proj, v_proj, output_proj], apply_lora_to_mlp True"};
  p.optimizer_loop = {
      OptimizerLoop::fused,
      "torchtune 0.6.1 recipes/configs/llama3_1/8B_lora_single_device.yaml: torch.optim.AdamW, "
      "fused True"};
  p.keep_logits = {false,
                   "torchtune 0.6.1 recipes/lora_finetune_single_device.py: `del logits` before backward"};
  p.checkpointing = {Checkpointing::full,
                     "torchtune 0.6.1 recipes/configs/llama3_1/8B_lora_single_device.yaml: "
                     "enable_activation_checkpointing True"};
  return p;
}

}  // namespace memplan::profiles
