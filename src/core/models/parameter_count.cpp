#include "core/models/parameter_count.hpp"

#include <algorithm>
#include <string_view>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"
#include "core/models/hf_config_dense_families.hpp"

namespace memplan {
namespace {

constexpr const char* k_what = "parameter count";

uint64_t mul(uint64_t a, uint64_t b) { return checked_mul(a, b, k_what); }
uint64_t add(uint64_t a, uint64_t b) { return checked_add(a, b, k_what); }

// Family facts TransformerArch does not state, read from each family's modelling code. The MoE
// families' facts are those their config.json readers (hf_config_moe.cpp) set by default, so a
// bare architecture (a GGUF's shapes, ZeRO's largest layer) counts as its config does.
void apply_family(std::string_view model_type, const TransformerArch& a, ParameterLayout& l) {
  if (model_type == "qwen2_moe") {
    l.qkv_bias = true;            // hard-coded in Qwen2MoeAttention
    l.shared_expert_gate = true;  // shared_expert_gate: hidden -> 1
  } else if (model_type == "deepseek_v3") {
    l.router_bias = true;  // topk_method noaux_tc (V3's default): e_score_correction_bias
  } else if (model_type == "gpt_oss") {
    l.qkv_bias = l.out_bias = true;  // attention_bias (default true)
    l.mlp_bias = true;               // GptOssExperts: gate_up and down biases
    l.router_bias = true;
    l.attention_sinks = true;
  } else if (model_type == "bert" || model_type == "roberta") {
    l.token_types = model_type == "roberta" ? 1 : 2;  // type_vocab_size defaults
    l.pooler = true;
  } else if (model_type == "qwen2") {
    l.qkv_bias = true;  // hard-coded in Qwen2Attention
  } else if (model_type == "phi3") {
    l.fused_gate_up = true;
  } else if (model_type == "opt") {
    if (l.position_rows) l.position_rows = add(a.max_positions, 2);  // OPT's offset of 2 rows
  } else if (model_type == "t5") {
    l.relative_buckets = 32;
  } else {
    detail::apply_dense_family(model_type, a, l);  // hf_config_dense_families.cpp
  }
}

}  // namespace

uint64_t LayerParameters::total() const {
  uint64_t t = add(attention, mlp);
  for (uint64_t part : {column_biases, row_biases, norms, router}) t = add(t, part);
  return t;
}

uint64_t norm_parameters(const TransformerArch& a) {
  return a.norm == "rmsnorm" ? a.hidden : mul(2, a.hidden);
}

ParameterLayout layout_of(const TransformerArch& a) {
  ParameterLayout l;
  l.qkv_bias = l.out_bias = l.mlp_bias = a.bias;
  l.fused_qkv = a.fused_qkv;
  l.norm_tensors = a.norm == "rmsnorm" ? 1 : 2;
  l.position_rows = a.position_embedding == "learned" ? a.max_positions : 0;
  l.embedding_norm = !a.norm_first;
  l.final_norm = a.final_norm;
  l.head = (a.causal || a.encoder_decoder) && !a.tied_embeddings;
  apply_family(a.model_type, a, l);
  if (!l.qk_norm_width && a.qk_norm == "head")  // Qwen3-MoE: RMSNorm(head_dim) on q and on k
    l.qk_norm_width = mul(2, a.resolved_head_dim());
  if (!l.qk_norm_width && a.qk_norm == "all")  // OLMoE: over all of q's and all of k's heads
    l.qk_norm_width = mul(add(a.heads, a.resolved_kv_heads()), a.resolved_head_dim());
  return l;
}

uint64_t dense_mlp_width(const TransformerArch& a) {
  return a.intermediate ? a.intermediate : mul(4, a.hidden);
}

uint64_t expert_mlp_width(const TransformerArch& a) {
  return a.expert_intermediate ? a.expert_intermediate : dense_mlp_width(a);
}

uint64_t dense_layer_mlp_width(const TransformerArch& a) {
  return a.dense_intermediate ? a.dense_intermediate : dense_mlp_width(a);
}

namespace {

// Multi-head latent attention (DeepSeek-V2/V3): q through a low-rank q_a (with its norm) and q_b
// (or directly), k and v from one compressed latent kv_a (with its norm) expanded by kv_b, a
// decoupled rotary key of qk_rope_head_dim shared by the heads, and the output projection.
void add_latent_attention(const TransformerArch& a, LayerParameters& p) {
  const uint64_t h = a.hidden, qhd = add(a.qk_nope_head_dim, a.qk_rope_head_dim);
  const uint64_t q_out = mul(a.heads, qhd);
  if (a.q_lora_rank) {
    p.attention = add(mul(h, a.q_lora_rank), mul(a.q_lora_rank, q_out));
    p.norms = add(p.norms, a.q_lora_rank);
    p.tensors = add(p.tensors, 3);
  } else {
    p.attention = mul(h, q_out);
    p.tensors = add(p.tensors, 1);
  }
  const uint64_t kv_b_out = mul(a.heads, add(a.qk_nope_head_dim, a.v_head_dim));
  p.attention = add(p.attention, mul(h, add(a.kv_lora_rank, a.qk_rope_head_dim)));
  p.attention = add(p.attention, mul(a.kv_lora_rank, kv_b_out));
  p.attention = add(p.attention, mul(mul(a.heads, a.v_head_dim), h));
  p.norms = add(p.norms, a.kv_lora_rank);
  p.tensors = add(p.tensors, 4);  // kv_a, its norm, kv_b, o
}

}  // namespace

LayerParameters count_layer_parameters(const TransformerArch& a, const ParameterLayout& l, uint64_t experts,
                                       bool cross_attention, bool dense_mlp) {
  const uint64_t h = a.hidden, hd = a.resolved_head_dim();
  const uint64_t q = mul(a.heads, hd), kv = mul(a.resolved_kv_heads(), hd);
  const uint64_t attentions = cross_attention ? 2 : 1;
  const uint64_t up = a.gated_mlp ? 2 : 1;  // gate and up, or up alone
  LayerParameters p;

  // Attention: q, k, v (fused or not) and the output projection; again for cross-attention.
  if (a.mla()) {
    add_latent_attention(a, p);
  } else {
    const uint64_t qkv_out = add(q, mul(2, kv));
    p.attention = mul(attentions, add(mul(h, qkv_out), mul(q, h)));
    const uint64_t qkv_tensors = l.fused_qkv ? 1 : 3;
    p.tensors = mul(attentions, qkv_tensors + 1);
    if (l.qkv_bias) {
      p.column_biases = mul(attentions, qkv_out);
      p.tensors = add(p.tensors, mul(attentions, qkv_tensors));
    }
  }
  if (l.out_bias) {
    p.row_biases = mul(attentions, h);
    p.tensors = add(p.tensors, attentions);
  }
  if (l.attention_sinks) {
    p.attention = add(p.attention, a.heads);
    p.tensors = add(p.tensors, 1);
  }

  // MLP: up (and gate) then down, per expert; a MoE layer adds its shared experts and a router.
  const uint64_t mlp_tensors = (a.gated_mlp && l.fused_gate_up ? 1 : up) + 1;
  auto add_mlps = [&](uint64_t count, uint64_t width) {
    p.mlp = add(p.mlp, mul(count, add(mul(mul(up, h), width), mul(width, h))));
    p.tensors = add(p.tensors, mul(count, mlp_tensors));
    if (l.mlp_bias) {
      p.column_biases = add(p.column_biases, mul(count, mul(up, width)));
      p.row_biases = add(p.row_biases, mul(count, h));
      p.tensors = add(p.tensors, mul(count, mlp_tensors));
    }
  };
  if (!a.experts || dense_mlp) {
    add_mlps(a.experts ? 1 : std::max<uint64_t>(experts, 1),
             dense_mlp ? dense_layer_mlp_width(a) : dense_mlp_width(a));
  } else {
    add_mlps(experts, expert_mlp_width(a));
    if (a.shared_intermediate) add_mlps(1, a.shared_intermediate);
    p.router = mul(h, a.experts);
    p.tensors = add(p.tensors, 1);
    if (l.router_bias) {
      p.router = add(p.router, a.experts);
      p.tensors = add(p.tensors, 1);
    }
    if (l.shared_expert_gate) {
      p.router = add(p.router, h);
      p.tensors = add(p.tensors, 1);
    }
  }

  // Norms: one per sub-block (cross-attention adds one), and q/k norms where the family has them.
  const uint64_t norms = add(l.norms_per_layer, cross_attention ? 1 : 0);
  p.norms = add(p.norms, mul(mul(norms, l.norm_tensors), h));
  p.tensors = add(p.tensors, mul(norms, l.norm_tensors));
  if (l.qk_norm_width) {
    p.norms = add(p.norms, l.qk_norm_width);
    p.tensors = add(p.tensors, 2);
  }
  return p;
}

ParameterCount count_parameters(const TransformerArch& a, const ParameterLayout& l) {
  if (a.layers == 0 || a.hidden == 0 || a.heads == 0)
    throw Error("architecture", "layers, hidden size and heads are needed to count parameters");
  const uint64_t h = a.hidden;
  ParameterCount c;
  uint64_t tensors = 0;
  auto part = [&](uint64_t& into, uint64_t parameters, uint64_t n_tensors) {
    into = add(into, parameters);
    tensors = add(tensors, n_tensors);
  };

  if (a.vocab > 0) {
    const uint64_t width = l.embedding_width ? l.embedding_width : h;
    part(c.embedding, mul(a.vocab, width), 1);
    if (width != h) part(c.embedding, mul(mul(2, h), width), 2);  // project_in and project_out
    if (l.position_rows) part(c.embedding, mul(l.position_rows, h), 1);
    if (l.token_types) part(c.embedding, mul(l.token_types, h), 1);
    if (l.embedding_norm) part(c.embedding, mul(l.norm_tensors, h), l.norm_tensors);
  }

  // Layers: MoE models may have dense layers (first_k_dense_replace, mlp_only_layers, ...).
  const uint64_t dense = a.experts ? std::min(a.dense_layers, a.layers) : 0;
  const uint64_t sparse = a.layers - dense;
  c.layer = count_layer_parameters(a, l, a.experts);
  uint64_t layers = mul(c.layer.total(), sparse);
  tensors = add(tensors, mul(c.layer.tensors, sparse));
  uint64_t active_layers = layers;
  if (a.experts) {
    const uint64_t k = std::min(a.experts_per_token ? a.experts_per_token : a.experts, a.experts);
    active_layers = mul(count_layer_parameters(a, l, k).total(), sparse);
  }
  if (dense) {
    c.dense_layer = count_layer_parameters(a, l, 1, false, true);
    const uint64_t d = mul(c.dense_layer.total(), dense);
    layers = add(layers, d);
    active_layers = add(active_layers, d);
    tensors = add(tensors, mul(c.dense_layer.tensors, dense));
  }

  const uint64_t stacks = a.encoder_decoder ? 2 : 1;
  if (a.encoder_decoder) {
    const uint64_t decoders = a.decoder_layers ? a.decoder_layers : a.layers;
    c.decoder_layer = count_layer_parameters(a, l, a.experts, true);
    const uint64_t decoder = mul(c.decoder_layer.total(), decoders);
    layers = add(layers, decoder);
    active_layers = add(active_layers, decoder);
    tensors = add(tensors, mul(c.decoder_layer.tensors, decoders));
  }
  for (uint64_t s = 0; s < stacks; ++s) {
    if (l.relative_buckets) part(c.final, mul(l.relative_buckets, a.heads), 1);
    if (l.final_norm) part(c.final, mul(l.norm_tensors, h), l.norm_tensors);
  }
  if (l.pooler) part(c.final, add(mul(h, h), h), 2);
  if (a.vocab > 0 && l.head) part(c.final, mul(a.vocab, h), 1);
  if (a.vocab > 0 && l.head && l.head_bias) part(c.final, a.vocab, 1);

  c.total = add(add(c.embedding, layers), c.final);
  c.active = add(add(c.embedding, active_layers), c.final);
  c.tensors = tensors;

  // DeepSeek-V3's multi-token-prediction module, as its checkpoint stores it: the two norms of
  // the token embedding and of the hidden state (enorm, hnorm), their projection eh_proj (2h -> h),
  // one more MoE decoder layer, and its own copy of the embedding, final norm and output head.
  if (a.mtp_layers) {
    const uint64_t norm = mul(l.norm_tensors, h);
    uint64_t module = add(mul(3, norm), mul(mul(2, h), h));
    module = add(add(module, c.layer.total()), mul(2, mul(a.vocab, h)));
    c.mtp = mul(a.mtp_layers, module);
    c.mtp_tensors = mul(a.mtp_layers, add(c.layer.tensors, add(mul(3, l.norm_tensors), 3)));
  }
  return c;
}

ParameterCount count_parameters(const TransformerArch& a) { return count_parameters(a, layout_of(a)); }

MlpParameters count_mlp_parameters(const std::vector<uint64_t>& widths) {
  MlpParameters m;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    m.parameters = add(m.parameters, add(mul(widths[i], widths[i + 1]), widths[i + 1]));  // weight + bias
    m.tensors = add(m.tensors, 2);
  }
  return m;
}

uint64_t largest_layer_parameters(const TransformerArch& a) {
  const LayerParameters p = count_layer_parameters(a, layout_of(a), a.experts);
  return std::max(add(p.attention, p.mlp), mul(a.vocab, a.hidden));
}

}  // namespace memplan
