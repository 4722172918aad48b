#pragma once
// Low-rank adapters (LoRA, QLoRA): which projection matrices carry a trainable adapter of rank r
// while every base weight (embeddings, norms, projections, LM head) stays frozen, and how many
// parameters the adapters add. peft's default for Llama is q_proj,v_proj; for GPT-2 the fused
// c_attn.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include <memplan/model.hpp>

namespace memplan {

// The adapted matrices of every transformer layer. Where the model fuses q/k/v into one matrix
// (GPT-2's c_attn), any of q, k, v adapts that one matrix.
struct LoraTargets {
  uint64_t rank = 0;
  bool q = false, k = false, v = false, o = false;  // attention projections
  bool gate = false, up = false, down = false;      // MLP projections (GPT-2: c_fc = up, c_proj = down)
  // How the adapters run. fp32_adapters: kept in fp32 on a half-precision model, each adapted
  // Linear's input cast to fp32 for them (peft >= 0.12: autocast_adapter_dtype=True, its default);
  // false: in the model's format (Lit-GPT, peft with autocast_adapter_dtype=False). dropout: on the
  // adapters' input (peft's lora_dropout, default 0): a mask and the dropped copy per adapter.
  bool fp32_adapters = true;
  double dropout = 0.0;

  bool any() const { return q || k || v || o || gate || up || down; }
};

// Parses a comma-separated list of matrices: q, k, v, o, gate, up, down, their Hugging Face
// names (q_proj, ..., down_proj), GPT-2's c_attn (q,k,v), c_fc (up), c_proj (o and down, as peft
// matches both), qkv, or "all". Error naming `subject` (with did-you-mean) for anything else.
LoraTargets parse_lora_targets(std::string_view subject, std::string_view text, uint64_t rank);

// "q,v" for the parsed targets; "c_attn,..." naming the fused matrix where arch fuses q/k/v.
std::string lora_target_names(const LoraTargets& t, const TransformerArch& arch);

// `count` adapted matrices of one block, each r x (in + out) parameters (count > 1: experts).
struct LoraMatrix {
  uint64_t count = 1;
  uint64_t in = 0;
  uint64_t out = 0;
};

// LoRA adapters of a model: r x (d_in + d_out) parameters per adapted matrix. Plain numbers:
// lora_target_names() names the targets; the CLI writes the arithmetic out.
struct LoraAdapters {
  uint64_t rank = 0;
  LoraTargets targets;      // as asked
  bool fused_qkv = false;   // the model fuses q/k/v (GPT-2's c_attn): one adapter for q, k, v
  bool gated_mlp = false;   // the model has a gate projection (else `gate` adapts nothing)
  uint64_t matrices = 0;    // adapted matrices in the whole model
  uint64_t parameters = 0;  // trainable adapter parameters
  // The sum: attention_blocks x (attention matrices) + mlp_blocks x (MLP matrices).
  uint64_t attention_blocks = 0;
  uint64_t mlp_blocks = 0;
  std::array<LoraMatrix, 4> attention{};  // q, k, v (or fused qkv), o
  uint8_t attention_count = 0;
  std::array<LoraMatrix, 3> mlp{};  // gate, up, down
  uint8_t mlp_count = 0;
};

// "q_proj,v_proj", or "c_attn (fused q,k,v),..." where the model fuses q/k/v.
std::string lora_target_names(const LoraAdapters& adapters);

// Adapters on `targets` in every layer (a T5 decoder's cross-attention counts as a second
// attention block). Throws Error when the model has no transformer architecture or the rank is
// 0. Llama-2-7B, r=16 on q,v: 32 layers x 2 matrices x 16 x (4096 + 4096) = 8,388,608.
LoraAdapters lora_adapters(const ModelSpec& model, const LoraTargets& targets);

}  // namespace memplan
