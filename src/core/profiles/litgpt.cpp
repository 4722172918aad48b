// litgpt: Lit-GPT's finetune scripts (framework.hpp names the model code's rules).
#include "core/profiles/profiles.hpp"

namespace memplan::profiles {

FrameworkProfile litgpt() {
  FrameworkProfile p;
  p.framework = Framework::litgpt;
  p.release = "Lit-GPT 8641822 (litgpt 0.5.9's finetune/lora.py keeps these)";
  p.runs = "Lit-GPT's finetune scripts on Fabric";
  p.loss = {Loss::chunked,
            "litgpt finetune/lora.py: model(input_ids, lm_head_chunk_size=128), chunked_cross_entropy"};
  p.lora_fp32 = {false, "litgpt lora.py: the adapters are made in the model's dtype (fabric.init_module)"};
  p.lora_dropout = {0.05, "litgpt finetune/lora.py setup: lora_dropout=0.05"};
  p.lora_targets = {"q,v", "litgpt finetune/lora.py setup: lora_query=True, lora_value=True, the rest False"};
  p.keep_logits = {true,
                   "litgpt finetune/lora.py fit: `logits = model(...)` stays bound through fabric.backward"};
  p.bitsandbytes = {BitsandbytesRelease{0, 41, 1},
                    "Lit-GPT 8641822 (2023-10-16) requirements-all.txt leaves bitsandbytes unpinned: "
                    "0.41.1 was the release then"};
  p.weight_load = {
      WeightLoad::litgpt_bnb,
      "Lit-GPT 8641822 finetune/lora.py: fabric.init_module(empty_init=(devices > 1)) builds the model "
      "on the GPU, each Linear quantised at construction from .to(\"cuda\", torch.half) (Lightning "
      "71aed751 fabric/plugins/precision/bitsandbytes.py _Linear4bit), then load_checkpoint's "
      "_quantize_on_load_hook quantises it again from an fp16 copy (litgpt 0.5.9 the same)"};
  return p;
}

}  // namespace memplan::profiles
