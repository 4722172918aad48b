#pragma once
// What Hugging Face transformers' modelling code keeps, by model family and release
// (--transformers; transformers_release.hpp). Each rule was read off the release's own files
// (models/<family>/modeling_<family>.py, loss/loss_utils.py) and measured with
// bench/frameworks/measure_saved.py on the release named (docs/accuracy.md):
//
//   logits upcast   the Llama family (llama, mistral, qwen2, gemma, phi3, mixtral, ...) upcasts
//                   its logits to fp32 from 4.31 (`logits = logits.float()` in the forward, the
//                   half logits dropped at once) and, from 4.46, inside ForCausalLMLoss (the half
//                   logits stay referenced by the caller); GPT-2 and OPT only from 4.48 and
//                   GPT-NeoX from 4.49, when they call self.loss_function; before, their
//                   cross-entropy reads the logits in the model's format. llama 4.30 and earlier
//                   do not upcast.
//   shifted copy    before 4.49 the loss reads `logits[..., :-1, :].contiguous()`, a copy of all
//                   but the last position (fp32 where upcast), and cross-entropy runs over s - 1
//                   positions; from 4.49 ForCausalLMLoss pads the labels instead
//                   (`nn.functional.pad(labels, (0, 1))`) and reads every position's logits.
//   eager softmax   the Llama template's softmax in fp32 in any half model; OPT before 4.49 only
//                   in fp16 (`if attn_weights.dtype == torch.float16`), bf16 in bf16; GPT-NeoX
//                   before 4.49 in the scores' own format (eager_attention_forward from 4.49).
//   OPT's max       OPT before 4.49 clamps the masked scores with torch.max(scores, finfo.min),
//                   which keeps its input for backward (the scores plus the mask: fp32 under
//                   autocast, whose mask is fp32).
//   sdpa            a family's attn_implementation="sdpa" exists from the release that set
//                   `_supports_sdpa = True` in its modelling file: llama 4.36; mistral, mixtral,
//                   qwen2 4.37; gemma 4.38; bert 4.41; gpt2, gpt_neox 4.42; phi3 4.45; opt 4.46.
//                   Before it transformers runs eager attention and refuses "sdpa".
// Families without a rule here keep the newest release's behaviour.

#include <optional>
#include <string>

#include <memplan/transformers_release.hpp>

namespace memplan::detail {

// The causal LM's loss, as the release's forward and loss code hand the logits over.
struct HfLossRule {
  bool upcast = true;         // cross-entropy reads fp32 logits (a copy of the half ones)
  bool half_dropped = false;  // the half logits are dropped once upcast (4.31 to 4.45's forward)
  bool shifted_copy = false;  // logits[..., :-1, :].contiguous(): s - 1 positions, a copy
};

HfLossRule hf_loss_rule(const std::string& model_type, TransformersRelease release);

// Whether eager attention's softmax runs in fp32 (and the PV matmul reads a half copy) in a
// pure half model of `fp16` or bf16 (autocast is decided by the caller).
bool hf_eager_softmax_fp32(const std::string& model_type, TransformersRelease release, bool fp16);

// Whether eager attention keeps the masked scores for torch.max's backward (OPT before 4.49).
bool hf_eager_max_keeps_scores(const std::string& model_type, TransformersRelease release);

// The first release whose `model_type` runs sdpa attention, or none (no rule: every release).
std::optional<TransformersRelease> hf_first_sdpa(const std::string& model_type);

}  // namespace memplan::detail
