#pragma once
// The training framework whose code runs the step, where it keeps tensors that torch alone does not
// decide. Plain values; the activation ledger, the parameter term and the timeline read them, and
// each framework's profile (framework_profile.hpp) sets the defaults its users really get.
//
//   hf:           Hugging Face transformers + peft in a loop of the user's own (torch.optim's
//                 defaults; memplan's default rules).
//   trainer:      transformers' Trainer over the same model code (TrainingArguments' defaults).
//   trl:          TRL's SFTTrainer, a Trainer (SFTConfig's defaults).
//   axolotl:      axolotl, a Trainer configured by its YAML schema's defaults.
//   llamafactory: LLaMA-Factory, a Trainer configured by its arguments' defaults.
//   torchtune:    torchtune's single-device recipes and their shipped configs.
//   unsloth:      unsloth's patched transformers models and its Trainer defaults.
//   litgpt:       Lit-GPT at commit 8641822 (github.com/Lightning-AI/litgpt) on Lightning Fabric 2.1 and
//                 torch 2.1, as its published resource tables ran (tests/data/gpu_measurements.json):
//                 - its RMSNorm computes in the model's format (no fp32 upcast) and torch 2.1's mean
//                   keeps its input x*x (fixed in torch 2.2: pytorch/pytorch#109935);
//                 - q, k, v come from one fused Linear; the LoRA adapters of q/k/v are one
//                   LoRAQKVLinear: one dropout, x.A for all adapted parts, and zero_pad's
//                   index_copy keeps the (batch, seq, adapted widths) update it scatters;
//                 - v is a view of the fused qkv output, so sdpa keeps all of it;
//                 - Fabric's bf16-true converts the model's output to the default dtype: fp32
//                   logits, cross-entropy in fp32; the LM head and loss run by chunks of 128, all
//                   chunks alive;
//                 - GELU is F.gelu (its input only), never Python ops;
//                 - bitsandbytes (Fabric's BitsandbytesPrecision) replaces every nn.Linear, the LM
//                   head included, and quantises from an fp16 copy: the embedding stays 16-bit, and
//                   each 4-bit matmul of more than one token dequantises the weight to fp16 and
//                   casts it to bf16;
//                 - the KV cache of generate holds every query head when kv heads are grouped.
#include <string_view>

namespace memplan {

enum class Framework { hf, trainer, trl, axolotl, llamafactory, torchtune, unsloth, litgpt };

// A name of the list above (also "transformers", "peft" for hf, "hf-trainer" for trainer,
// "lit-gpt", "llama-factory"), case-insensitive, else Error naming `subject`.
Framework parse_framework(std::string_view subject, std::string_view text);
const char* to_string(Framework f);

// Lit-GPT runs its own model code; every other framework runs transformers' modelling code (unsloth
// patches some of its kernels, torchtune's own modules compute as transformers' do where the ledger
// counts them: framework_profile.hpp says where they differ).
inline bool runs_transformers_code(Framework f) { return f != Framework::litgpt; }

}  // namespace memplan
