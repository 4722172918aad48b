#pragma once
// Inference memory besides the weights: the KV cache
// (2 x layers x kv_heads x head_dim x seq x batch x bytes; a layer with a sliding or chunked
// window holds min(window, seq) tokens; multi-head latent attention caches kv_lora_rank +
// qk_rope_head_dim per token and layer, as vLLM and SGLang store it) and the largest transient
// buffer of one forward pass over the prompt (prefill). The cache is linear in batch; the buffer is
// too until batch x seq reaches the prefill chunk, where an engine splits the prompts into passes.

#include <cstdint>
#include <string>

#include <memplan/estimate.hpp>
#include <memplan/model.hpp>
#include <memplan/storage_format.hpp>
#include "core/memory/activations.hpp"

namespace memplan {

// What inference_memory needs besides the architecture.
struct InferenceOptions {
  uint64_t batch = 1;
  uint64_t seq = 0;           // tokens cached per sequence (prompt + generated)
  ElementCost kv_cost{2, 1};  // bytes per cached element (--kv-format)
  std::string kv_format = "fp16";
  ElementCost act_cost{2, 1};  // bytes per element of the forward's intermediates
  std::string act_format = "fp16";
  Attention attention = Attention::sdpa;  // eager materialises heads x seq x seq scores in prefill
  bool fp32_logits = false;               // logits upcast to fp32
  bool all_logits = false;                // prefill computes logits for every position, not only the last
  uint64_t prefill_chunk = 0;             // tokens one forward pass takes (0: the whole batch at once)
};

struct KvCache {
  // Per layer kind: cached elements per token in one layer (MLA: the latent, else k and v of
  // every kv head), and how many tokens each kind holds (windowed layers: min(window, seq)).
  uint64_t elements_per_token = 0;
  uint64_t full_layers = 0;
  uint64_t window_layers = 0;
  uint64_t window_tokens = 0;         // tokens a windowed layer holds
  uint64_t cross_layers = 0;          // cross-attention layers (mllama): they hold the image tokens
  uint64_t cross_tokens = 0;          // tokens a cross-attention layer holds (the images', not seq)
  uint64_t naive_bytes = 0;           // MLA: the per-head cache (heads x (k + v)) of a naive implementation
  uint64_t bytes = 0;                 // the cache, for the whole batch
  uint64_t bytes_per_sample = 0;      // the cache for one sequence
  uint64_t working_buffer_bytes = 0;  // largest transient buffer, whole batch
  uint64_t working_buffer_per_sample = 0;
  KvBuffer working_buffer = KvBuffer::none;  // which buffer that is
  uint64_t prefill_tokens = 0;               // tokens of the pass it is for (batch x seq, or the chunk)
};

// One layer's cached elements per token, K and V apart: kv_heads x head_dim each (V: x v_head_dim
// when a GGUF states a narrower value_length, as older DeepSeek conversions do); with multi-head
// latent attention one K row of kv_lora_rank + qk_rope_head_dim (the latent and the rotary key)
// and no V, as vLLM's MLA backends, SGLang and llama.cpp (V-less cache since ggml-org/llama.cpp
// PR 19067, src/llama-kv-cache.cpp: no V tensor when hparams.is_mla()) store it.
struct KvRowElements {
  uint64_t k = 0;
  uint64_t v = 0;
};
KvRowElements kv_row_elements(const TransformerArch& arch);

// KV cache and working buffer of `arch` at opts; Error when layers/heads/hidden or seq are 0.
KvCache inference_memory(const TransformerArch& arch, const InferenceOptions& opts);

}  // namespace memplan
