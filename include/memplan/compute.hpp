#pragma once
// How a training step computes what the activation models count: the attention implementation
// and activation checkpointing. One type each, used by the request, the activation ledger and
// the tensor/pipeline-parallel (Megatron) model.

#include <string_view>

namespace memplan {

// How attention is computed. eager: matmul + softmax, keeps the s x s probabilities per head;
// sdpa: fused scaled_dot_product_attention (flash / memory-efficient), keeps q, k, v, the
// output and its log-sum-exp only.
enum class Attention { eager, sdpa };

// Activation checkpointing (recomputation). selective: recompute the attention core (scores,
// softmax, attention dropout) in backward; full: keep one input per layer, recompute the layer.
enum class Checkpointing { none, selective, full };

// How a causal LM's loss is computed (the largest tensors of many fine-tunes).
//   plain:   Hugging Face: the whole batch x seq x vocab logits, their fp32 upcast, cross-entropy's
//            fp32 log-softmax; backward starts with two gradients of that size.
//   chunked: Lit-GPT / torchtune: the LM head and cross-entropy run per chunk of 128 positions in the
//            half format, no fp32 upcast; the logits stay alive through backward (the training loop
//            holds them) and backward's loss gradients are one chunk's.
//   fused:   fused linear cross-entropy (Liger): the logits never exist as a whole; forward keeps
//            the LM head input's gradient instead.
//   logprob: TRL's fused LM head (trl 1.16.0 kernels/chunked_logprob.py ChunkedLogProbFunction):
//            per-token log-probabilities through the LM head in 4096-token x 32768-vocab tiles of
//            one reused buffer; forward keeps the head's input (a copy of s - 1 positions) and two
//            fp32 numbers per token, backward rebuilds each tile and accumulates the input's
//            gradient in fp32.
enum class Loss { plain, chunked, fused, logprob };

// "eager" (also "math") / "sdpa" (also "flash", "fused"), case-insensitive, else Error naming
// `subject` with did-you-mean.
Attention parse_attention(std::string_view subject, std::string_view text);
// "none" (also "off") / "selective" / "full", case-insensitive, else Error naming `subject`.
Checkpointing parse_checkpointing(std::string_view subject, std::string_view text);
// "plain" / "chunked" / "fused" / "logprob", case-insensitive, else Error naming `subject`.
Loss parse_loss(std::string_view subject, std::string_view text);
const char* to_string(Loss l);
const char* to_string(Attention a);
const char* to_string(Checkpointing c);

}  // namespace memplan
