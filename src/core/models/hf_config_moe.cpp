// config.json families with fine-grained mixture of experts (Qwen2-MoE, Qwen3-MoE, DeepSeek-V2/V3,
// OLMoE, Phi-3.5-MoE, gpt-oss, Llama 4's text model) and DeepSeek's multi-head latent attention.
// Each reads which layers are dense and which are MoE by its own rule, the routed and shared
// experts' widths, and the block details of its transformers module, then counts with the one
// parameter counter. Checked against published counts (tests/unit/test_hf_config_moe.cpp).
#include <algorithm>
#include <string>
#include <vector>

#include "core/base/text.hpp"
#include "core/models/hf_config_reader.hpp"

namespace memplan::detail {

namespace {

// The decoder fields every family here reads (vocab, hidden, layers, heads, kv heads, head_dim,
// intermediate), into a RMSNorm SwiGLU decoder without biases; each family then changes what is
// its own.
TransformerArch read_decoder(ConfigReader& c, FamilyCount& r) {
  TransformerArch a;
  a.vocab = c.need({"vocab_size"});
  a.hidden = c.need({"hidden_size"});
  a.layers = c.need({"num_hidden_layers"});
  a.heads = c.need({"num_attention_heads"});
  a.kv_heads = a.heads;
  if (auto v = c.count({"num_key_value_heads"}))
    a.kv_heads = *v;
  else
    r.notes.push_back(
        "no num_key_value_heads: multi-head attention assumed (kv heads = heads = " + to_s(a.heads) + ")");
  if (a.kv_heads == 0 || a.heads % a.kv_heads != 0)
    c.fail("num_key_value_heads", to_s(a.kv_heads) + " does not divide num_attention_heads " + to_s(a.heads));
  a.head_dim = a.hidden / a.heads;
  if (auto v = c.count({"head_dim"})) {
    if (*v == 0) c.fail("head_dim", "is 0 (expected at least 1)");
    a.head_dim = *v;
  }
  a.intermediate = c.need({"intermediate_size"});
  a.max_positions = c.count_or({"max_position_embeddings"}, 0);
  a.gated_mlp = true;
  a.activation = c.text({"hidden_act"}).value_or("silu");
  a.norm = "rmsnorm";
  a.attention_dropout = c.real({"attention_dropout"}).value_or(0.0);
  return a;
}

// Routed experts and experts per token from the family's keys; Error when k > E.
void read_experts(ConfigReader& c, TransformerArch& a, std::initializer_list<const char*> experts_keys,
                  std::initializer_list<const char*> k_keys) {
  a.experts = c.need(experts_keys);
  a.experts_per_token = c.need(k_keys);
  if (a.experts_per_token > a.experts)
    c.fail(c.used().back(), to_s(a.experts_per_token) + " is more than the " + to_s(a.experts) + " experts");
}

// The layer indices listed in `key` (mlp_only_layers, moe_layers), each below `layers`.
std::vector<uint64_t> layer_list(ConfigReader& c, const char* key, uint64_t layers) {
  std::vector<uint64_t> out;
  const nlohmann::json& j = c.json();
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) c.fail(key, "is not a list of layer indices");
  for (const nlohmann::json& v : *it) {
    if (!v.is_number_unsigned() || v.get<uint64_t>() >= layers)
      c.fail(key, "holds " + v.dump() + ", not a layer index below num_hidden_layers " + to_s(layers));
    if (std::find(out.begin(), out.end(), v.get<uint64_t>()) == out.end()) out.push_back(v.get<uint64_t>());
  }
  return out;
}

bool tied_or_untied(ConfigReader& c, std::vector<std::string>& notes, const std::string& mt) {
  if (auto t = c.flag({"tie_word_embeddings"})) return *t;
  notes.push_back("no tie_word_embeddings: " + mt + " defaults to an untied lm_head");
  return false;
}

// Counts `r.arch` built as `layout` into r.total, r.active, r.tensors and r.mtp.
void count_moe(FamilyCount& r, const ParameterLayout& layout) {
  const ParameterCount c = count_parameters(r.arch, layout);
  r.layout = layout;
  r.total = c.total;
  r.active = c.active;
  r.tensors = c.tensors;
  r.mtp = c.mtp;
}

void moe_note(FamilyCount& r) {
  const TransformerArch& a = r.arch;
  std::string s = "MoE: " + to_s(a.moe_layers()) + " of " + to_s(a.layers) + " layers route each token to " +
                  to_s(a.experts_per_token) + " of " + to_s(a.experts) + " experts (" +
                  to_s(a.expert_intermediate ? a.expert_intermediate : a.intermediate) + " wide)";
  if (a.shared_intermediate)
    s += " plus " + to_s(a.shared_experts) + " shared expert(s) (" + to_s(a.shared_intermediate) + " wide)";
  if (a.dense_layers) s += "; " + to_s(a.dense_layers) + " dense layer(s)";
  r.notes.push_back(s);
}

}  // namespace

// qwen2_moe / qwen3_moe: a layer is MoE unless listed in mlp_only_layers or off the
// decoder_sparse_step rhythm ((i + 1) % step != 0); experts moe_intermediate_size wide.
// qwen2_moe: q/k/v biases and one shared expert (shared_expert_intermediate_size) behind a
// hidden -> 1 sigmoid gate. qwen3_moe: per-head RMSNorms on q and k (2 x head_dim), no shared expert.
FamilyCount count_qwen_moe(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  r.arch = read_decoder(c, r);
  TransformerArch& a = r.arch;
  read_experts(c, a, {"num_experts"}, {"num_experts_per_tok"});
  a.expert_intermediate = c.need({"moe_intermediate_size"});
  const uint64_t step = c.count_or({"decoder_sparse_step"}, 1);
  if (step == 0) c.fail("decoder_sparse_step", "is 0 (expected at least 1)");
  const std::vector<uint64_t> mlp_only = layer_list(c, "mlp_only_layers", a.layers);
  for (uint64_t i = 0; i < a.layers; ++i)
    if (std::find(mlp_only.begin(), mlp_only.end(), i) != mlp_only.end() || (i + 1) % step != 0)
      ++a.dense_layers;
  r.mlp_fields = "num_experts, moe_intermediate_size, decoder_sparse_step, mlp_only_layers";
  ParameterLayout layout;
  layout.norm_tensors = 1;
  if (mt == "qwen2_moe") {
    layout.qkv_bias = true;  // hard-coded in Qwen2MoeAttention
    a.shared_experts = 1;
    a.shared_intermediate = c.need({"shared_expert_intermediate_size"});
    layout.shared_expert_gate = true;
    r.mlp_fields += ", shared_expert_intermediate_size";
    r.notes.push_back("qwen2_moe: q, k, v projections have biases (hard-coded, not in the config)");
  } else {
    layout.qkv_bias = layout.out_bias = c.flag_or({"attention_bias"}, false);
    layout.qk_norm_width = (Count(2) * a.head_dim).v;  // q_norm and k_norm over head_dim
    a.qk_norm = "head";
  }
  a.tied_embeddings = tied_or_untied(c, r.notes, mt);
  layout.head = !a.tied_embeddings;
  moe_note(r);
  count_moe(r, layout);
  return r;
}

// deepseek_v2 / deepseek_v3: multi-head latent attention (q_lora_rank, kv_lora_rank,
// qk_nope_head_dim, qk_rope_head_dim, v_head_dim); the first first_k_dense_replace layers, and
// those off the moe_layer_freq rhythm, are dense (intermediate_size); the others hold
// n_routed_experts experts and n_shared_experts shared ones, each moe_intermediate_size wide, and
// a router (V3: with a score-correction bias per expert, topk_method "noaux_tc"). V3 also stores
// num_nextn_predict_layers multi-token-prediction modules, counted apart.
FamilyCount count_deepseek(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  r.arch = read_decoder(c, r);
  TransformerArch& a = r.arch;
  read_experts(c, a, {"n_routed_experts"}, {"num_experts_per_tok"});
  a.expert_intermediate = c.need({"moe_intermediate_size"});
  a.shared_experts = c.count_or({"n_shared_experts"}, 0);
  a.shared_intermediate = (Count(a.shared_experts) * a.expert_intermediate).v;
  const uint64_t first_dense = c.count_or({"first_k_dense_replace"}, 0);
  const uint64_t freq = c.count_or({"moe_layer_freq"}, 1);
  if (freq == 0) c.fail("moe_layer_freq", "is 0 (expected at least 1)");
  for (uint64_t i = 0; i < a.layers; ++i)
    if (i < first_dense || i % freq != 0) ++a.dense_layers;
  r.mlp_fields =
      "n_routed_experts, n_shared_experts, moe_intermediate_size, first_k_dense_replace, moe_layer_freq";

  a.q_lora_rank = c.count_or({"q_lora_rank"}, 0);
  a.kv_lora_rank = c.need({"kv_lora_rank"});
  a.qk_nope_head_dim = c.need({"qk_nope_head_dim"});
  a.qk_rope_head_dim = c.need({"qk_rope_head_dim"});
  a.v_head_dim = c.need({"v_head_dim"});
  a.head_dim = a.qk_nope_head_dim + a.qk_rope_head_dim;  // q and k per head
  if (c.flag_or({"attention_bias"}, false))
    c.fail("attention_bias", "true: memplan does not count biases on the latent-attention projections");
  a.mtp_layers = c.count_or({"num_nextn_predict_layers"}, 0);

  ParameterLayout layout;
  layout.norm_tensors = 1;
  const std::string topk = c.text({"topk_method"}).value_or(mt == "deepseek_v3" ? "noaux_tc" : "greedy");
  layout.router_bias = topk == "noaux_tc";
  if (layout.router_bias)
    r.notes.push_back("topk_method noaux_tc: the router stores a score-correction bias per expert");
  a.tied_embeddings = tied_or_untied(c, r.notes, mt);
  layout.head = !a.tied_embeddings;
  r.notes.push_back(
      "multi-head latent attention: q " +
      (a.q_lora_rank ? "through rank " + to_s(a.q_lora_rank) : std::string("projected directly")) +
      ", k and v from a " + to_s(a.kv_lora_rank) + "-wide latent plus a " + to_s(a.qk_rope_head_dim) +
      "-wide rotary key");
  moe_note(r);
  count_moe(r, layout);
  if (a.mtp_layers)
    r.notes.push_back("num_nextn_predict_layers " + to_s(a.mtp_layers) + ": the checkpoint also stores " +
                      to_s(r.mtp) + " multi-token-prediction parameters, not loaded for plain decoding");
  return r;
}

// olmoe: every layer MoE with experts intermediate_size wide; RMSNorms on the whole q and k
// projections (hidden and kv width), no biases, untied head.
FamilyCount count_olmoe(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  r.arch = read_decoder(c, r);
  TransformerArch& a = r.arch;
  read_experts(c, a, {"num_experts"}, {"num_experts_per_tok"});
  r.mlp_fields = "num_experts, intermediate_size";
  ParameterLayout layout;
  layout.norm_tensors = 1;
  layout.qkv_bias = layout.out_bias = c.flag_or({"attention_bias"}, false);
  layout.qk_norm_width = (Count(a.heads) * a.head_dim + Count(a.kv_heads) * a.head_dim).v;
  a.qk_norm = "all";
  a.tied_embeddings = tied_or_untied(c, r.notes, mt);
  layout.head = !a.tied_embeddings;
  moe_note(r);
  count_moe(r, layout);
  return r;
}

// phimoe (Phi-3.5-MoE): every layer MoE, LayerNorms with biases, q/k/v/o biases when
// attention_bias, an lm_head bias when lm_head_bias.
FamilyCount count_phimoe(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  r.arch = read_decoder(c, r);
  TransformerArch& a = r.arch;
  read_experts(c, a, {"num_local_experts"}, {"num_experts_per_tok"});
  r.mlp_fields = "num_local_experts, intermediate_size";
  a.norm = "layernorm";
  ParameterLayout layout;  // LayerNorm: weight and bias
  layout.qkv_bias = layout.out_bias = c.flag_or({"attention_bias"}, false);
  layout.head_bias = c.flag_or({"lm_head_bias"}, false);
  a.tied_embeddings = tied_or_untied(c, r.notes, mt);
  layout.head = !a.tied_embeddings;
  moe_note(r);
  count_moe(r, layout);
  return r;
}

// gpt_oss: every layer MoE; q/k/v/o with biases (attention_bias), a learned sink logit per head,
// a router with biases, and experts whose gate_up and down projections have biases
// (hard-coded in GptOssExperts); untied head.
FamilyCount count_gpt_oss(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  r.arch = read_decoder(c, r);
  TransformerArch& a = r.arch;
  read_experts(c, a, {"num_local_experts"}, {"num_experts_per_tok", "experts_per_token"});
  r.mlp_fields = "num_local_experts, intermediate_size";
  a.attention_sinks = true;
  ParameterLayout layout;
  layout.norm_tensors = 1;
  layout.qkv_bias = layout.out_bias = c.flag_or({"attention_bias"}, true);
  layout.mlp_bias = true;
  layout.router_bias = true;
  layout.attention_sinks = true;
  a.tied_embeddings = tied_or_untied(c, r.notes, mt);
  layout.head = !a.tied_embeddings;
  r.notes.push_back(
      "gpt_oss: experts and router have biases, and each layer a sink logit per head "
      "(hard-coded, not in the config)");
  moe_note(r);
  count_moe(r, layout);
  return r;
}

// llama4_text: MoE layers listed in moe_layers (else every interleave_moe_layer_step-th layer),
// each with experts intermediate_size wide and one shared expert of the same width; the other
// layers dense, intermediate_size_mlp wide. q/k norms are parameter-free L2 norms.
FamilyCount count_llama4_text(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  r.arch = read_decoder(c, r);
  TransformerArch& a = r.arch;
  read_experts(c, a, {"num_local_experts"}, {"num_experts_per_tok"});
  a.expert_intermediate = a.intermediate;
  a.dense_intermediate = c.need({"intermediate_size_mlp"});
  a.shared_experts = 1;
  a.shared_intermediate = a.intermediate;
  uint64_t moe = 0;
  if (c.has("moe_layers")) {
    moe = layer_list(c, "moe_layers", a.layers).size();
    r.mlp_fields = "num_local_experts, intermediate_size, intermediate_size_mlp, moe_layers";
  } else {
    const uint64_t step = c.count_or({"interleave_moe_layer_step"}, 1);
    if (step == 0) c.fail("interleave_moe_layer_step", "is 0 (expected at least 1)");
    moe = a.layers / step;  // layers step-1, 2*step-1, ...
    r.mlp_fields = "num_local_experts, intermediate_size, intermediate_size_mlp, interleave_moe_layer_step";
  }
  a.dense_layers = a.layers - moe;
  ParameterLayout layout;
  layout.norm_tensors = 1;
  layout.qkv_bias = layout.out_bias = c.flag_or({"attention_bias"}, false);
  a.tied_embeddings = tied_or_untied(c, r.notes, mt);
  layout.head = !a.tied_embeddings;
  moe_note(r);
  count_moe(r, layout);
  return r;
}

}  // namespace memplan::detail
