// Inference memory: the KV cache and the largest transient buffer of the prefill pass.
//
// KV cache = 2 (k and v) x layers x kv_heads x head_dim x seq x batch x bytes per element; a
// windowed layer (sliding or chunked) holds min(window, seq) tokens; a cross-attention layer
// (mllama) holds the images' tokens instead of the text's; with multi-head latent
// attention one latent of kv_lora_rank + qk_rope_head_dim per token and layer replaces 2 x kv_heads
// x head_dim (the naive per-head layout, heads x (qk_nope + qk_rope + v), is kept as naive_bytes).
// Working buffer (one forward pass of t tokens, no autograd; t = batch x seq, or the prefill
// chunk when smaller): the residual stream and one norm output (2 x t x hidden) plus the largest of
//   - eager attention: scores and probabilities, 2 x heads x seq x seq (sdpa: none);
//   - MLP intermediate: gated 3 x seq x intermediate (gate activation, up, product), else 2;
//   - logits: vocab per position computed (last position only unless all_logits), plus an fp32
//     copy when upcast.
// With all_logits (a plain forward: transformers' LlamaForCausalLM.forward with logits_to_keep=0,
// modeling_llama.py in 5.24.0, and the same in every causal LM there) the logits of every token of
// the batch are the forward's output and stay while each chunk is prefilled; at the LM head the
// residual stream is gone (LlamaModel.forward rebinds hidden_states to self.norm's output), so the
// buffer is that output (t x hidden) + the logits (batch x seq x vocab in the model's format: no
// upcast without labels). transformers' generate() passes logits_to_keep=1 (generation/utils.py,
// _supports_logits_to_keep) and copies the last position's logits to fp32: the default above.

#include "core/memory/kv_cache.hpp"

#include <algorithm>
#include <array>
#include <cstddef>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"

namespace memplan {
namespace {

uint64_t mul3(uint64_t a, uint64_t b, uint64_t c) {
  return checked_mul(checked_mul(a, b, "inference bytes"), c, "inference bytes");
}

}  // namespace

KvRowElements kv_row_elements(const TransformerArch& arch) {
  if (arch.mla()) return {checked_add(arch.kv_lora_rank, arch.qk_rope_head_dim, "kv elements"), 0};
  const uint64_t k = checked_mul(arch.resolved_kv_heads(), arch.resolved_head_dim(), "kv elements");
  const uint64_t v =
      arch.v_head_dim ? checked_mul(arch.resolved_kv_heads(), arch.v_head_dim, "kv elements") : k;
  return {k, v};
}

KvCache inference_memory(const TransformerArch& arch, const InferenceOptions& opts) {
  if (arch.layers == 0)
    throw Error("architecture", "the number of layers is 0 (give " + field_ref(Field::layers) +
                                    " or a model with its config)");
  if (arch.heads == 0 || arch.resolved_head_dim() == 0)
    throw Error("architecture", "the number of attention heads is 0 (give " + field_ref(Field::heads) + ")");
  if (arch.hidden == 0)
    throw Error("architecture", "the hidden size is 0 (give " + field_ref(Field::hidden) + ")");
  if (opts.seq == 0)
    throw Error(Field::seq, "the sequence length is 0 (expected tokens per sequence, e.g. 4096)");

  const uint64_t s = opts.seq;
  KvCache kv;
  const KvRowElements row = kv_row_elements(arch);
  kv.elements_per_token = checked_add(row.k, row.v, "kv elements");
  kv.window_layers = arch.attention_window ? std::min(arch.window_layers, arch.layers) : 0;
  kv.cross_layers = std::min(arch.cross_attention_layers, arch.layers - kv.window_layers);
  kv.cross_tokens = kv.cross_layers ? arch.cross_attention_tokens : 0;
  kv.full_layers = arch.layers - kv.window_layers - kv.cross_layers;
  kv.window_tokens = kv.window_layers ? std::min(arch.attention_window, s) : 0;
  const uint64_t layer_tokens =
      checked_add(checked_add(checked_mul(kv.full_layers, s, "kv elements"),
                              checked_mul(kv.window_layers, kv.window_tokens, "kv elements"), "kv elements"),
                  checked_mul(kv.cross_layers, kv.cross_tokens, "kv elements"), "kv elements");
  uint64_t elements = checked_mul(kv.elements_per_token, layer_tokens, "kv elements");
  kv.bytes_per_sample = bytes_for(elements, opts.kv_cost, "KV cache bytes");
  kv.bytes = checked_mul(opts.batch, kv.bytes_per_sample, "KV cache bytes");
  if (arch.mla()) {
    const uint64_t per_head = checked_add(arch.qk_nope_head_dim, arch.qk_rope_head_dim, "kv elements");
    const uint64_t naive =
        mul3(arch.heads, checked_add(per_head, arch.v_head_dim, "kv elements"), layer_tokens);
    kv.naive_bytes =
        checked_mul(opts.batch, bytes_for(naive, opts.kv_cost, "KV cache bytes"), "KV cache bytes");
  }

  const uint64_t ff = arch.intermediate ? arch.intermediate : checked_mul(4, arch.hidden, "intermediate");
  // One forward pass covers `t` tokens: every prompt at once (batch x seq), or the engine's
  // chunk when the prompts are longer than it (vLLM's max_num_batched_tokens, llama.cpp's n_batch).
  const uint64_t all_tokens = checked_mul(opts.batch, s, "tokens");
  const uint64_t t = opts.prefill_chunk && opts.prefill_chunk < all_tokens ? opts.prefill_chunk : all_tokens;
  struct Candidate {
    KvBuffer kind;
    uint64_t bytes;  // the whole working buffer while this is the largest
  };
  // The residual stream and one norm output, beside the attention scores or the MLP intermediate.
  // A transformers forward (all_logits) holds four inside a layer: LlamaModel.forward keeps
  // inputs_embeds to its end, its loop variable keeps the layer's input, and the layer holds the
  // attention sum (the MLP's residual) and the norm output (modeling_llama.py, 5.24.0).
  const uint64_t stream_tensors = opts.all_logits ? 4 : 2;
  const uint64_t stream = bytes_for(mul3(stream_tensors, t, arch.hidden), opts.act_cost, "hidden states");
  const auto beside_stream = [&](uint64_t b) { return checked_add(stream, b, "working buffer"); };
  std::array<Candidate, 3> candidates{};
  size_t n = 0;
  if (opts.attention == Attention::eager)  // the pass's queries against up to seq keys
    candidates[n++] = {
        KvBuffer::attention_scores,
        beside_stream(bytes_for(checked_mul(2, mul3(arch.heads, t, s), "scores"), opts.act_cost, "scores"))};
  candidates[n++] = {KvBuffer::mlp_intermediate, beside_stream(bytes_for(mul3(arch.gated_mlp ? 3 : 2, t, ff),
                                                                         opts.act_cost, "MLP intermediate"))};
  if (arch.vocab > 0 && opts.all_logits) {  // the final norm's output and every token's logits
    const uint64_t logits = bytes_for(checked_mul(all_tokens, arch.vocab, "logits"), opts.act_cost, "logits");
    const uint64_t normed =
        bytes_for(checked_mul(t, arch.hidden, "hidden states"), opts.act_cost, "hidden states");
    candidates[n++] = {KvBuffer::all_logits, checked_add(logits, normed, "working buffer")};
  } else if (arch.vocab > 0) {  // the last position of each sequence
    uint64_t logits = bytes_for(checked_mul(opts.batch, arch.vocab, "logits"), opts.act_cost, "logits");
    if (opts.fp32_logits)
      logits = checked_add(logits, checked_mul(4, checked_mul(opts.batch, arch.vocab, "logits"), "logits"));
    candidates[n++] = {KvBuffer::logits, beside_stream(logits)};
  }
  auto largest = std::max_element(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(n),
                                  [](const Candidate& a, const Candidate& b) { return a.bytes < b.bytes; });
  kv.working_buffer_bytes = largest->bytes;
  kv.working_buffer_per_sample = kv.working_buffer_bytes / opts.batch;
  kv.working_buffer = largest->kind;
  kv.prefill_tokens = t;
  return kv;
}

}  // namespace memplan
