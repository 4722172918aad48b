// A decoder's tensors as llama.cpp's converter names and shapes them (see gguf_tensors.hpp).
// Names: llama.cpp's src/llama-arch.cpp (LLM_TENSOR_NAMES); shapes: the create_tensor calls of
// src/llama-model.cpp (ne[0] is the input width of a matrix); types: convert_hf_to_gguf.py
// (1-D tensors and ffn_gate_inp / position_embd F32, matrices in the output type, F16 here).
#include "core/models/gguf_tensors.hpp"

#include <memplan/error.hpp>
#include "core/base/checked.hpp"
#include "core/models/parameter_count.hpp"

namespace memplan {
namespace {

constexpr const char* k_gguf_what = "GGUF tensor elements";

uint64_t mul_elements(uint64_t a, uint64_t b) { return checked_mul(a, b, k_gguf_what); }
uint64_t add_elements(uint64_t a, uint64_t b) { return checked_add(a, b, k_gguf_what); }

const GgufType& type_named(const char* name) {
  for (const GgufType& t : gguf_types())
    if (std::string(name) == t.name) return t;
  throw Error("GGUF", std::string("unknown ggml type ") + name);
}

struct Writer {
  GgufFile& g;
  const ParameterLayout& l;

  void add(const std::string& name, std::vector<uint64_t> dims, const char* type) {
    GgufTensor t;
    t.name = name;
    t.dims = std::move(dims);
    t.elements = 1;
    for (uint64_t d : t.dims) t.elements = mul_elements(t.elements, d);
    const GgufType& ty = type_named(type);
    t.type = ty.id;
    t.bytes = checked_mul_ratio(t.elements, ty.type_size, ty.block, "GGUF bytes");
    g.tensors.push_back(std::move(t));
  }
  // A matrix (F16 as converted) and, when `bias`, its bias over the output width (F32).
  void linear(const std::string& name, uint64_t in, uint64_t out, bool bias) {
    add(name + ".weight", {in, out}, "F16");
    if (bias) add(name + ".bias", {out}, "F32");
  }
  // A norm over `width`: weight, and bias for a LayerNorm.
  void norm(const std::string& name, uint64_t width) {
    add(name + ".weight", {width}, "F32");
    if (l.norm_tensors == 2) add(name + ".bias", {width}, "F32");
  }
  // An MLP `width` wide: gate (or gate and up fused into ffn_up) and up, then down; `suffix` is
  // "" for a dense MLP, "_shexp" for the shared experts.
  void mlp(const TransformerArch& a, const std::string& p, const std::string& suffix, uint64_t width) {
    const uint64_t h = a.hidden;
    if (a.gated_mlp && l.fused_gate_up) {
      linear(p + "ffn_up" + suffix, h, mul_elements(2, width), l.mlp_bias);
    } else {
      if (a.gated_mlp) linear(p + "ffn_gate" + suffix, h, width, l.mlp_bias);
      linear(p + "ffn_up" + suffix, h, width, l.mlp_bias);
    }
    linear(p + "ffn_down" + suffix, width, h, l.mlp_bias);
  }
};

// llama.cpp's DeepSeek-2 attention (llama-model.cpp, LLM_ARCH_DEEPSEEK2): q through attn_q_a,
// its norm and attn_q_b (or attn_q), the latent and the rotary key from attn_kv_a_mqa, its norm,
// then kv_b as the converter splits it for MLA (convert_hf_to_gguf.py DeepseekV2Model:
// "MLA with the absorption optimization, needs these two split and k_b_proj transposed"):
// attn_k_b {qk_nope, kv_lora_rank, heads} and attn_v_b {kv_lora_rank, v_head_dim, heads}.
void latent_attention(Writer& w, const TransformerArch& a, const std::string& p) {
  const uint64_t h = a.hidden, qhd = add_elements(a.qk_nope_head_dim, a.qk_rope_head_dim);
  if (a.q_lora_rank) {
    w.linear(p + "attn_q_a", h, a.q_lora_rank, false);
    w.norm(p + "attn_q_a_norm", a.q_lora_rank);
    w.linear(p + "attn_q_b", a.q_lora_rank, mul_elements(a.heads, qhd), false);
  } else {
    w.linear(p + "attn_q", h, mul_elements(a.heads, qhd), false);
  }
  w.linear(p + "attn_kv_a_mqa", h, add_elements(a.kv_lora_rank, a.qk_rope_head_dim), false);
  w.norm(p + "attn_kv_a_norm", a.kv_lora_rank);
  w.add(p + "attn_k_b.weight", {a.qk_nope_head_dim, a.kv_lora_rank, a.heads}, "F16");
  w.add(p + "attn_v_b.weight", {a.kv_lora_rank, a.v_head_dim, a.heads}, "F16");
  w.linear(p + "attn_output", mul_elements(a.heads, a.v_head_dim), h, w.l.out_bias);
}

void attention(Writer& w, const TransformerArch& a, const std::string& p) {
  const uint64_t h = a.hidden, hd = a.resolved_head_dim();
  const uint64_t q = mul_elements(a.heads, hd), kv = mul_elements(a.resolved_kv_heads(), hd);
  if (a.mla()) {
    latent_attention(w, a, p);
  } else {
    if (w.l.fused_qkv) {
      w.linear(p + "attn_qkv", h, add_elements(q, mul_elements(2, kv)), w.l.qkv_bias);
    } else {
      w.linear(p + "attn_q", h, q, w.l.qkv_bias);
      w.linear(p + "attn_k", h, kv, w.l.qkv_bias);
      w.linear(p + "attn_v", h, kv, w.l.qkv_bias);
    }
    w.linear(p + "attn_output", q, h, w.l.out_bias);
  }
  if (w.l.qk_norm_width) {  // per head (Qwen3, Gemma 3: head_dim each) or over all heads (OLMo 2)
    const bool per_head = w.l.qk_norm_width == mul_elements(2, hd);
    w.add(p + "attn_q_norm.weight", {per_head ? hd : q}, "F32");
    w.add(p + "attn_k_norm.weight", {w.l.qk_norm_width - (per_head ? hd : q)}, "F32");
  }
  if (w.l.attention_sinks) w.add(p + "attn_sinks.weight", {a.heads}, "F32");  // gpt-oss
}

// A MoE layer's MLP (llama-model.cpp): the router ffn_gate_inp {hidden, experts} (F32, never
// quantised), its bias (gpt-oss ffn_gate_inp.bias; DeepSeek-V3 exp_probs_b.bias), the experts
// stacked in ffn_{gate,up,down}_exps {in, out, experts}, the shared experts ffn_*_shexp and
// Qwen2-MoE's shared-expert gate ffn_gate_inp_shexp {hidden}.
void moe(Writer& w, const TransformerArch& a, const std::string& p) {
  const uint64_t h = a.hidden, e = a.experts, width = expert_mlp_width(a);
  w.add(p + "ffn_gate_inp.weight", {h, e}, "F32");
  if (w.l.router_bias) w.add(p + (w.l.mlp_bias ? "ffn_gate_inp.bias" : "exp_probs_b.bias"), {e}, "F32");
  const bool bias = w.l.mlp_bias;
  if (a.gated_mlp && w.l.fused_gate_up) {
    w.add(p + "ffn_up_exps.weight", {h, mul_elements(2, width), e}, "F16");
    if (bias) w.add(p + "ffn_up_exps.bias", {mul_elements(2, width), e}, "F32");
  } else {
    for (const char* n : {"ffn_gate_exps", "ffn_up_exps"}) {
      if (!a.gated_mlp && std::string(n) == "ffn_gate_exps") continue;
      w.add(p + n + ".weight", {h, width, e}, "F16");
      if (bias) w.add(p + n + ".bias", {width, e}, "F32");
    }
  }
  w.add(p + "ffn_down_exps.weight", {width, h, e}, "F16");
  if (bias) w.add(p + "ffn_down_exps.bias", {h, e}, "F32");
  if (a.shared_intermediate) w.mlp(a, p, "_shexp", a.shared_intermediate);
  if (w.l.shared_expert_gate) w.add(p + "ffn_gate_inp_shexp.weight", {h}, "F32");
}

}  // namespace

GgufFile gguf_tensors_of_arch(const TransformerArch& a, const std::string& what) {
  if (!a.layers || !a.hidden || !a.heads || !a.vocab || (!a.intermediate && !a.expert_intermediate))
    throw Error(Field::quantize,
                "\"" + what + "\" needs the model's layers, hidden size, heads, MLP width and vocabulary");
  if (a.encoder_decoder || !a.causal)
    throw Error(Field::quantize, "\"" + what + "\" is planned for decoder-only models");
  const ParameterLayout l = layout_of(a);
  GgufFile g;
  Writer w{g, l};
  const uint64_t h = a.hidden;
  w.add("token_embd.weight", {h, a.vocab}, "F16");
  if (l.position_rows) w.add("position_embd.weight", {h, l.position_rows}, "F32");
  // Which layers are dense in a MoE model: the first dense_layers (DeepSeek's first_k_dense_replace).
  const uint64_t dense = a.experts ? std::min(a.dense_layers, a.layers) : a.layers;
  static const char* norms[] = {"attn_norm", "ffn_norm", "post_attention_norm", "post_ffw_norm"};
  for (uint64_t i = 0; i < a.layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    for (uint64_t n = 0; n < l.norms_per_layer && n < 4; ++n) w.norm(p + norms[n], h);
    attention(w, a, p);
    if (i < dense)
      w.mlp(a, p, "", a.experts ? dense_layer_mlp_width(a) : dense_mlp_width(a));
    else
      moe(w, a, p);
  }
  if (l.final_norm) w.norm("output_norm", h);
  if (l.head) w.linear("output", h, a.vocab, l.head_bias);
  return g;
}

}  // namespace memplan
