#include "core/memory/parameter_tensors.hpp"

#include <algorithm>

#include "core/base/checked.hpp"
#include "core/models/parameter_count.hpp"

namespace memplan {

uint64_t TensorShape::elements() const {
  const uint64_t per = cols ? checked_mul(rows, cols, "tensor") : rows;
  return checked_mul(batch, per, "tensor");
}

// torch.optim.Adafactor and transformers' Adafactor factor the last two dimensions: a row and a
// column factor per stacked matrix.
uint64_t TensorShape::factors() const {
  return cols ? checked_mul(batch, checked_add(rows, cols, "tensor"), "tensor") : 0;
}

std::vector<TensorShape> ParameterShapes::in_order() const {
  std::vector<TensorShape> out(before);
  for (uint64_t l = 0; l < dense_layers; ++l) out.insert(out.end(), dense_layer.begin(), dense_layer.end());
  for (uint64_t l = 0; l < layers; ++l) out.insert(out.end(), layer.begin(), layer.end());
  out.insert(out.end(), after.begin(), after.end());
  return out;
}

uint64_t ParameterShapes::all_layers() const { return checked_add(dense_layers, layers, "tensor"); }

namespace {

uint64_t mul_tensor(uint64_t a, uint64_t b) { return checked_mul(a, b, "tensor"); }
uint64_t add_tensor(uint64_t a, uint64_t b) { return checked_add(a, b, "tensor"); }

// A MoE or latent-attention decoder as transformers v5 registers it (model.parameters() order),
// with the layout and widths of the one parameter counter (parameter_count.hpp) so that the
// elements add up to count_parameters(arch).total. Sources (transformers 5.x, the version
// docs/accuracy.md measured against): models/{mixtral,qwen2_moe,qwen3_moe,olmoe,deepseek_v2,
// deepseek_v3,gpt_oss}/modeling_*.py.
struct LayoutBuilder {
  const TransformerArch& a;
  const ParameterLayout l;

  void linear(std::vector<TensorShape>& into, uint64_t in, uint64_t out, bool bias) const {
    into.push_back({out, in});
    if (bias) into.push_back({out, 0});
  }
  void norm(std::vector<TensorShape>& into, uint64_t width) const {
    for (uint64_t i = 0; i < l.norm_tensors; ++i) into.push_back({width, 0});
  }
  // DeepseekV2Attention / DeepseekV3Attention: q_a_proj, q_a_layernorm, q_b_proj (or q_proj),
  // kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj.
  void latent_attention(std::vector<TensorShape>& t) const {
    const uint64_t h = a.hidden, qhd = add_tensor(a.qk_nope_head_dim, a.qk_rope_head_dim);
    if (a.q_lora_rank) {
      linear(t, h, a.q_lora_rank, false);
      norm(t, a.q_lora_rank);
      linear(t, a.q_lora_rank, mul_tensor(a.heads, qhd), false);
    } else {
      linear(t, h, mul_tensor(a.heads, qhd), false);
    }
    linear(t, h, add_tensor(a.kv_lora_rank, a.qk_rope_head_dim), false);
    norm(t, a.kv_lora_rank);
    linear(t, a.kv_lora_rank, mul_tensor(a.heads, add_tensor(a.qk_nope_head_dim, a.v_head_dim)), false);
    linear(t, mul_tensor(a.heads, a.v_head_dim), h, l.out_bias);
  }
  // q, k, v (or fused), o; then Qwen3-MoE's q_norm/k_norm (head_dim each) or OLMoE's (over all
  // of q's and of k's heads), and gpt-oss's sinks (one per head).
  void attention(std::vector<TensorShape>& t) const {
    const uint64_t h = a.hidden, hd = a.resolved_head_dim();
    const uint64_t q = mul_tensor(a.heads, hd), kv = mul_tensor(a.resolved_kv_heads(), hd);
    if (a.mla()) {
      latent_attention(t);
    } else {
      if (l.fused_qkv) {
        linear(t, h, add_tensor(q, mul_tensor(2, kv)), l.qkv_bias);
      } else {
        linear(t, h, q, l.qkv_bias);
        linear(t, h, kv, l.qkv_bias);
        linear(t, h, kv, l.qkv_bias);
      }
      linear(t, q, h, l.out_bias);
    }
    if (l.qk_norm_width) {
      const uint64_t q_norm = l.qk_norm_width == mul_tensor(2, hd) ? hd : q;
      t.push_back({q_norm, 0});
      t.push_back({l.qk_norm_width - q_norm, 0});
    }
    if (l.attention_sinks) t.push_back({a.heads, 0});
  }
  // A dense MLP `width` wide: gate_proj, up_proj (gate_up_proj when fused), down_proj.
  void mlp(std::vector<TensorShape>& t, uint64_t width) const {
    const uint64_t h = a.hidden;
    if (a.gated_mlp && l.fused_gate_up) {
      linear(t, h, mul_tensor(2, width), l.mlp_bias);
    } else {
      if (a.gated_mlp) linear(t, h, width, l.mlp_bias);
      linear(t, h, width, l.mlp_bias);
    }
    linear(t, width, h, l.mlp_bias);
  }
  // transformers v5's fused experts (MixtralExperts, Qwen3MoeExperts, ...: "Collection of expert
  // weights stored as 3D tensors"): gate_up_proj [E, 2I, H] and down_proj [E, H, I], one tensor
  // each for all experts (gpt-oss: with gate_up_proj_bias [E, 2I] and down_proj_bias [E, H]).
  void experts(std::vector<TensorShape>& t) const {
    const uint64_t h = a.hidden, e = a.experts, width = expert_mlp_width(a);
    const uint64_t up = a.gated_mlp ? mul_tensor(2, width) : width;
    t.push_back({up, h, e});
    if (l.mlp_bias) t.push_back({e, up});
    t.push_back({h, width, e});
    if (l.mlp_bias) t.push_back({e, h});
  }
  // The router (TopKRouter.weight [E, H]; its bias: gpt-oss's router.bias, DeepSeek-V3's
  // e_score_correction_bias, counted as the parameter counter counts it).
  void router(std::vector<TensorShape>& t) const {
    t.push_back({a.experts, a.hidden});
    if (l.router_bias) t.push_back({a.experts, 0});
  }
  // The MoE block in each family's registration order: Mixtral, Qwen2-MoE, OLMoE, gpt-oss register
  // the router (gate) before the experts; Qwen3-MoE and DeepSeek-V2/V3 the experts first. Then the
  // shared experts (Qwen2-MoE's shared_expert and shared_expert_gate [1, H]; DeepSeek's
  // shared_experts, moe_intermediate x n_shared_experts wide).
  void moe(std::vector<TensorShape>& t) const {
    const bool experts_first = a.model_type == "qwen3_moe" || a.mla() || a.model_type == "deepseek_v3";
    if (!experts_first) router(t);
    experts(t);
    if (experts_first) router(t);
    if (a.shared_intermediate) mlp(t, a.shared_intermediate);
    if (l.shared_expert_gate) t.push_back({1, a.hidden});
  }
  // A decoder layer: self_attn, mlp, then its norms (input_layernorm, post_attention_layernorm):
  // the order MixtralDecoderLayer.__init__ and the others assign them.
  std::vector<TensorShape> layer(bool dense) const {
    std::vector<TensorShape> t;
    attention(t);
    if (dense)
      mlp(t, a.experts ? dense_layer_mlp_width(a) : dense_mlp_width(a));
    else
      moe(t);
    for (uint64_t n = 0; n < l.norms_per_layer; ++n) norm(t, a.hidden);
    return t;
  }
};

ParameterShapes layout_shapes(const TransformerArch& a) {
  const LayoutBuilder b{a, layout_of(a)};
  const ParameterLayout& l = b.l;
  const uint64_t h = a.hidden;
  ParameterShapes p;
  if (a.vocab) p.before.push_back({a.vocab, h});
  if (l.position_rows) p.before.push_back({l.position_rows, h});
  const uint64_t dense = a.experts ? std::min(a.dense_layers, a.layers) : a.layers;
  if (a.experts) {
    p.dense_layers = dense;
    if (dense) p.dense_layer = b.layer(true);
    p.layers = a.layers - dense;
    p.layer = b.layer(false);
  } else {
    p.layers = a.layers;
    p.layer = b.layer(true);
  }
  if (l.final_norm) b.norm(p.after, h);
  if (a.vocab && l.head) b.linear(p.after, h, a.vocab, l.head_bias);
  return p;
}

}  // namespace

ParameterShapes parameter_shapes(const ModelSpec& m) {
  ParameterShapes p;
  if (!m.mlp_widths.empty()) {
    for (size_t i = 0; i + 1 < m.mlp_widths.size(); ++i) {
      p.before.push_back({m.mlp_widths[i + 1], m.mlp_widths[i]});
      p.before.push_back({m.mlp_widths[i + 1], 0});
    }
    return p;
  }
  if (!m.arch) return p;
  const TransformerArch& a = *m.arch;
  // MoE and latent-attention decoders: the counter's layout (gguf_tensors.cpp builds llama.cpp's
  // shapes from the same source).
  if ((a.experts || a.mla()) && a.causal && !a.encoder_decoder && a.hidden && a.heads && a.layers)
    return layout_shapes(a);
  const uint64_t h = a.hidden;
  const uint64_t hd = a.resolved_head_dim();
  const uint64_t qd = checked_mul(a.heads, hd, "tensor");
  const uint64_t kvd = checked_mul(a.resolved_kv_heads(), hd, "tensor");
  const uint64_t ff = a.intermediate ? a.intermediate : checked_mul(4, h, "tensor");
  // The biases, norms and q/k norms as the parameter counter lays them out (Qwen2: q, k and v
  // biases only, hard-coded; Cohere: one LayerNorm without bias per layer; Qwen3, OLMo 2: q_norm and
  // k_norm, one tensor here).
  const ParameterLayout l = layout_of(a);
  const uint64_t norm_tensors = l.norm_tensors;
  auto linear = [&](uint64_t in, uint64_t out, bool bias) {
    p.layer.push_back({out, in});
    if (bias) p.layer.push_back({out, 0});
  };
  if (a.vocab) p.before.push_back({a.vocab, h});
  if (a.position_embedding == "learned" && a.max_positions) p.before.push_back({a.max_positions, h});
  if (!a.norm_first)
    for (uint64_t i = 0; i < norm_tensors; ++i) p.before.push_back({h, 0});
  if (a.fused_qkv) {
    linear(h, qd + 2 * kvd, l.qkv_bias);
  } else {
    linear(h, qd, l.qkv_bias);
    linear(h, kvd, l.qkv_bias);
    linear(h, kvd, l.qkv_bias);
  }
  linear(qd, h, l.out_bias);
  if (l.qk_norm_width) p.layer.push_back({l.qk_norm_width, 0});
  for (uint64_t i = 0; i < l.norms_per_layer * norm_tensors; ++i) p.layer.push_back({h, 0});
  if (a.gated_mlp) linear(h, ff, l.mlp_bias);
  linear(h, ff, l.mlp_bias);
  linear(ff, h, l.mlp_bias);
  p.layers = a.layers;
  if (a.final_norm)
    for (uint64_t i = 0; i < norm_tensors; ++i) p.after.push_back({h, 0});
  if (a.vocab && a.causal && !a.tied_embeddings) p.after.push_back({a.vocab, h});
  if (!a.causal) p.after.push_back({h, h});  // an encoder's pooler
  return p;
}

}  // namespace memplan
