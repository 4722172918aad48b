// config.json families: each reads its fields into a TransformerArch and the layout facts of its
// transformers module (biases, norms, fused tensors, extra tables), and counts with the one
// parameter counter (parameter_count.hpp). Checked against published counts
// (tests/unit/test_hf_config.cpp).
#include <string>

#include "core/base/text.hpp"
#include "core/models/hf_config_reader.hpp"
#include "core/models/parameter_count.hpp"

namespace memplan::detail {

namespace {

// The dimensions every family reads from its config, in this order:
// {layers, hidden, heads, kv_heads, head_dim, intermediate, vocab, max_positions}.
struct Dims {
  uint64_t layers, hidden, heads, kv_heads, head_dim, intermediate, vocab, max_positions;
};

// A TransformerArch with `d` filled in; each family then sets what is its own (activation, norm,
// tied embeddings, dropouts, encoder layout).
TransformerArch arch_of(const Dims& d) {
  TransformerArch a;
  a.layers = d.layers;
  a.hidden = d.hidden;
  a.heads = d.heads;
  a.kv_heads = d.kv_heads;
  a.head_dim = d.head_dim;
  a.intermediate = d.intermediate;
  a.vocab = d.vocab;
  a.max_positions = d.max_positions;
  return a;
}

// Counts `r.arch` built as `layout` into r.total, r.active (MoE only) and r.tensors.
void count(FamilyCount& r, const ParameterLayout& layout) {
  const ParameterCount c = count_parameters(r.arch, layout);
  r.layout = layout;
  r.total = c.total;
  r.active = r.arch.experts ? c.active : 0;
  r.tensors = c.tensors;
  r.layout = layout;
}

}  // namespace

// llama / mistral / mixtral / qwen2 / gemma / phi3: RMSNorm, SwiGLU (gemma: GeGLU) MLP of three
// matrices, no biases unless the config (or qwen2's code) adds them. Mixtral: E experts per
// layer plus a router h x E; per token only k experts run.
FamilyCount count_gated_decoder(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  const uint64_t V = c.need({"vocab_size"});
  const uint64_t h = c.need({"hidden_size"});
  const uint64_t L = c.need({"num_hidden_layers"});
  const uint64_t nh = c.need({"num_attention_heads"});
  uint64_t nkv = nh;
  if (auto v = c.count({"num_key_value_heads"}))
    nkv = *v;
  else
    r.notes.push_back("no num_key_value_heads: multi-head attention assumed (kv heads = heads = " + to_s(nh) +
                      ")");
  if (nkv == 0 || nh % nkv != 0)
    c.fail("num_key_value_heads", to_s(nkv) + " does not divide num_attention_heads " + to_s(nh));
  uint64_t hd = h / nh;
  if (auto v = c.count({"head_dim"})) {
    if (*v == 0) c.fail("head_dim", "is 0 (expected at least 1)");
    hd = *v;
  }
  if (hd * nh != h)
    r.notes.push_back("head_dim " + to_s(hd) + " x heads " + to_s(nh) + " != hidden_size " + to_s(h));
  const uint64_t I = c.need({"intermediate_size"});

  ParameterLayout layout;
  layout.norm_tensors = 1;  // RMSNorm
  if (mt == "qwen2") {      // q, k, v biases: bias=True is hard-coded in Qwen2Attention
    layout.qkv_bias = true;
    r.notes.push_back("qwen2: q, k, v projections have biases (hard-coded, not in the config)");
  }
  if (c.flag_or({"attention_bias"}, false)) layout.qkv_bias = layout.out_bias = true;
  layout.mlp_bias = c.flag_or({"mlp_bias"}, false);
  if (mt == "phi3") layout.fused_qkv = layout.fused_gate_up = true;  // same count, fewer tensors

  const uint64_t E = c.count_or({"num_local_experts", "num_experts"}, 0);
  uint64_t k = c.count_or({"num_experts_per_tok", "num_experts_per_token"}, 0);
  if (E && !k) {
    k = 2;
    r.notes.push_back("no num_experts_per_tok: 2 experts per token assumed (Mixtral's default)");
  }
  if (k > E) c.fail("num_experts_per_tok", to_s(k) + " is more than the " + to_s(E) + " experts");
  if (E)
    r.notes.push_back("MoE: " + to_s(E) + " experts per layer, " + to_s(k) +
                      " used per token; attention is shared");
  const bool tied = tied_embeddings(c, mt, r.notes);
  layout.head = !tied;

  r.arch = arch_of({L, h, nh, nkv, hd, I, V, c.count_or({"max_position_embeddings"}, 0)});
  TransformerArch& a = r.arch;
  a.gated_mlp = true;
  a.activation = c.text({"hidden_activation", "hidden_act"}).value_or("silu");
  a.norm = "rmsnorm";
  a.tied_embeddings = tied;
  a.attention_dropout = c.real({"attention_dropout"}).value_or(0.0);
  a.experts = E;
  a.experts_per_token = E ? k : 0;
  count(r, layout);
  return r;
}

// gpt2: Conv1D layers with biases, learned positions, LayerNorm, lm_head tied to wte.
FamilyCount count_gpt2(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  const uint64_t V = c.need({"vocab_size"});
  const uint64_t h = c.need({"n_embd", "hidden_size"});
  const uint64_t L = c.need({"n_layer", "num_hidden_layers"});
  const uint64_t nh = c.need({"n_head", "num_attention_heads"});
  const uint64_t P = c.need({"n_positions", "n_ctx", "max_position_embeddings"});
  const uint64_t inner = c.count_or({"n_inner"}, (Count(4) * h).v);
  ParameterLayout layout;  // Conv1D with biases, fused c_attn, LayerNorm, tied lm_head
  layout.qkv_bias = layout.out_bias = layout.mlp_bias = true;
  layout.fused_qkv = true;
  layout.position_rows = P;
  r.notes.push_back("lm_head tied to wte; Hugging Face checkpoints also store " + to_s(L) +
                    " attn.bias causal masks (buffers, not parameters)");
  r.arch = arch_of({L, h, nh, nh, h / nh, inner, V, P});
  TransformerArch& a = r.arch;
  a.activation = c.text({"activation_function"}).value_or("gelu_new");
  a.norm = "layernorm";
  a.tied_embeddings = true;
  a.hidden_dropout = c.real({"resid_pdrop"}).value_or(0.1);
  a.attention_dropout = c.real({"attn_pdrop"}).value_or(0.1);
  (void)mt;
  count(r, layout);
  return r;
}

// bert / roberta encoders: BertModel with its pooler (no MLM/NSP heads), biases everywhere.
FamilyCount count_bert(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  const uint64_t V = c.need({"vocab_size"});
  const uint64_t h = c.need({"hidden_size"});
  const uint64_t L = c.need({"num_hidden_layers"});
  const uint64_t nh = c.need({"num_attention_heads"});
  const uint64_t I = c.need({"intermediate_size"});
  const uint64_t P = c.need({"max_position_embeddings"});
  const uint64_t T = c.count_or({"type_vocab_size"}, 2);
  ParameterLayout layout;  // post-LN, biases everywhere, token types, embedding LayerNorm, pooler
  layout.qkv_bias = layout.out_bias = layout.mlp_bias = true;
  layout.position_rows = P;
  layout.token_types = T;
  layout.embedding_norm = true;
  layout.final_norm = false;
  layout.pooler = true;
  const Count mlm = Count(h) * h + h + Count(2) * h + V;
  r.notes.push_back("encoder (" + mt + "Model with pooler); a masked-LM checkpoint adds a head of " +
                    to_s(mlm.v) + " parameters (its decoder matrix is tied to the embeddings)");
  const bool roberta_offset = mt == "roberta" && P > 2;
  if (roberta_offset)
    r.notes.push_back("roberta: " + to_s(P) + " position rows, of which 2 are the padding offset: " +
                      to_s(P - 2) + " usable positions");
  r.arch = arch_of({L, h, nh, nh, h / nh, I, V, roberta_offset ? P - 2 : P});
  TransformerArch& a = r.arch;
  a.causal = false;
  a.activation = c.text({"hidden_act"}).value_or("gelu");
  a.norm = "layernorm";
  a.tied_embeddings = c.flag_or({"tie_word_embeddings"}, true);
  a.hidden_dropout = c.real({"hidden_dropout_prob"}).value_or(0.1);
  a.attention_dropout = c.real({"attention_probs_dropout_prob"}).value_or(0.1);
  const nlohmann::json& j = c.json();
  const auto archs = j.find("architectures");
  if (archs != j.end() && archs->is_array() && !archs->empty() && (*archs)[0].is_string()) {
    const std::string cls = (*archs)[0].get<std::string>();
    if (ends_with(cls, "ForMaskedLM")) a.encoder_head = "mlm";
    if (ends_with(cls, "ForSequenceClassification")) {
      a.encoder_head = "classification";
      const auto id2label = j.find("id2label");
      a.labels = c.count_or({"num_labels"}, id2label != j.end() && id2label->is_object() && !id2label->empty()
                                                ? id2label->size()
                                                : 2);
    }
  }
  count(r, layout);
  return r;
}

// t5: encoder-decoder, no biases, RMS-style norms, relative position bias in each stack's first
// layer, lm_head tied to the shared embedding unless tie_word_embeddings is false (t5 v1.1).
FamilyCount count_t5(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  const uint64_t V = c.need({"vocab_size"});
  const uint64_t d = c.need({"d_model", "hidden_size"});
  const uint64_t nh = c.need({"num_heads", "num_attention_heads"});
  const uint64_t dkv = c.count_or({"d_kv"}, d / nh);
  if (dkv == 0) c.fail("d_kv", "is 0 (expected at least 1)");
  const uint64_t dff = c.need({"d_ff", "intermediate_size"});
  const uint64_t Le = c.need({"num_layers", "num_hidden_layers"});
  const uint64_t Ld = c.count_or({"num_decoder_layers"}, Le);
  const uint64_t nb = c.count_or({"relative_attention_num_buckets"}, 32);
  const std::string proj = c.text({"feed_forward_proj"}).value_or("relu");
  const bool gated = proj.rfind("gated-", 0) == 0;
  const bool tied = tied_embeddings(c, mt, r.notes);
  ParameterLayout layout;  // no biases, RMS-style norms, a relative position bias per stack
  layout.norm_tensors = 1;
  layout.relative_buckets = nb;
  layout.head = !tied;
  r.notes.push_back("t5 is an encoder-decoder: " + to_s(Le) + " encoder layers and " + to_s(Ld) +
                    " decoder layers (with cross-attention); layers = encoder, decoder_layers = decoder");
  r.arch = arch_of({Le, d, nh, nh, dkv, dff, V, c.count_or({"n_positions"}, 0)});
  TransformerArch& a = r.arch;
  a.causal = false;
  a.encoder_decoder = true;
  a.decoder_layers = Ld;
  a.gated_mlp = gated;
  a.activation = c.text({"dense_act_fn"}).value_or(gated ? proj.substr(6) : proj);
  a.norm = "rmsnorm";
  a.tied_embeddings = tied;
  a.hidden_dropout = c.real({"dropout_rate"}).value_or(0.1);
  a.attention_dropout = a.hidden_dropout;
  count(r, layout);
  return r;
}

// opt: learned positions with an offset of 2 rows, biases, ReLU, lm_head tied.
FamilyCount count_opt(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  const uint64_t V = c.need({"vocab_size"});
  const uint64_t h = c.need({"hidden_size"});
  const uint64_t L = c.need({"num_hidden_layers"});
  const uint64_t nh = c.need({"num_attention_heads"});
  const uint64_t F = c.need({"ffn_dim"});
  const uint64_t P = c.need({"max_position_embeddings"});
  const uint64_t wep = c.count_or({"word_embed_proj_dim"}, h);
  const bool b = c.flag_or({"enable_bias"}, true);
  const bool affine = c.flag_or({"layer_norm_elementwise_affine"}, true);
  ParameterLayout layout;  // learned positions with 2 offset rows, lm_head tied
  layout.qkv_bias = layout.out_bias = layout.mlp_bias = b;
  layout.norm_tensors = affine ? 2 : 0;
  layout.position_rows = (Count(P) + 2).v;
  layout.embedding_width = wep;
  layout.final_norm =
      c.flag_or({"do_layer_norm_before"}, true) && !c.flag_or({"_remove_final_layer_norm"}, false);
  r.notes.push_back("opt: the position table has max_position_embeddings + 2 rows; lm_head tied");
  r.arch = arch_of({L, h, nh, nh, h / nh, F, V, P});
  TransformerArch& a = r.arch;
  a.activation = c.text({"activation_function"}).value_or("relu");
  a.norm = "layernorm";
  a.tied_embeddings = tied_embeddings(c, mt, r.notes);
  a.hidden_dropout = c.real({"dropout"}).value_or(0.1);
  a.attention_dropout = c.real({"attention_dropout"}).value_or(0.0);
  count(r, layout);
  return r;
}

// gpt_neox (pythia): fused qkv with biases, two LayerNorms per layer (parallel residual),
// untied embed_out.
FamilyCount count_gpt_neox(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  const uint64_t V = c.need({"vocab_size"});
  const uint64_t h = c.need({"hidden_size"});
  const uint64_t L = c.need({"num_hidden_layers"});
  const uint64_t nh = c.need({"num_attention_heads"});
  const uint64_t I = c.need({"intermediate_size"});
  const bool tied = tied_embeddings(c, mt, r.notes);
  ParameterLayout layout;  // fused qkv, biases, two LayerNorms per layer
  layout.qkv_bias = layout.out_bias = layout.mlp_bias = true;
  layout.fused_qkv = true;
  layout.head = !tied;
  if (auto pct = c.real({"rotary_pct"}))
    r.notes.push_back("rotary embeddings on " + std::to_string(*pct) + " of each head");
  r.arch = arch_of({L, h, nh, nh, h / nh, I, V, c.count_or({"max_position_embeddings"}, 0)});
  TransformerArch& a = r.arch;
  a.activation = c.text({"hidden_act"}).value_or("gelu");
  a.norm = "layernorm";
  a.tied_embeddings = tied;
  a.hidden_dropout = c.real({"hidden_dropout"}).value_or(0.0);
  a.attention_dropout = c.real({"attention_dropout"}).value_or(0.0);
  count(r, layout);
  return r;
}

// falcon (and legacy RefinedWebModel configs): multi-query attention (one kv head) unless the
// new decoder architecture is used, parallel attention with one LayerNorm, lm_head tied.
FamilyCount count_falcon(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  const uint64_t V = c.need({"vocab_size"});
  const uint64_t h = c.need({"hidden_size"});
  const uint64_t L = c.need({"num_hidden_layers", "n_layer"});
  const uint64_t nh = c.need({"num_attention_heads", "n_head"});
  const uint64_t hd = h / nh;
  // model_type "RefinedWeb" is falcon-40b's original code (modelling_RW.py), the new decoder
  // architecture: n_head_kv groups of kv heads, ln_attn + ln_mlp; "RefinedWebModel" (falcon-7b) is
  // the old one (multi_query, one LayerNorm). Converters map them so (NeMo's load_falcon_config).
  const bool new_arch = c.flag_or({"new_decoder_architecture"}, mt == "RefinedWeb");
  if (mt == "RefinedWeb" && !c.has("new_decoder_architecture"))
    r.notes.push_back(
        "falcon: model_type RefinedWeb is the new decoder architecture (n_head_kv kv heads, "
        "ln_attn and ln_mlp)");
  const bool mq = c.flag_or({"multi_query"}, true);
  // transformers FalconAttention: num_kv_heads from the config only with the new architecture
  // or without multi_query; otherwise one kv head (re-saves that write num_kv_heads 71 are wrong).
  uint64_t nkv = 1;
  if (new_arch || !mq)
    nkv = c.count_or({"num_kv_heads", "n_head_kv"}, nh);
  else
    r.notes.push_back("falcon: multi_query, so 1 kv head (any num_kv_heads in the config is ignored)");
  if (nkv == 0) c.fail("num_kv_heads", "is 0 (expected at least 1)");
  const bool b = c.flag_or({"bias"}, false);
  const uint64_t ffn = c.count_or({"ffn_hidden_size"}, (Count(4) * h).v);
  uint64_t n_ln = 2;
  if (new_arch)
    n_ln = c.count_or({"num_ln_in_parallel_attn"}, 2);
  else if (c.flag_or({"parallel_attn"}, true))
    n_ln = 1;
  const bool tied = tied_embeddings(c, mt, r.notes);
  ParameterLayout layout;  // fused query_key_value, LayerNorms, lm_head tied unless configured
  layout.qkv_bias = layout.out_bias = layout.mlp_bias = b;
  layout.fused_qkv = true;
  layout.norms_per_layer = n_ln;
  layout.head = !tied;
  r.notes.push_back("falcon: " + to_s(n_ln) +
                    " LayerNorm(s) per layer; checkpoints may store lm_head.weight "
                    "separately although it is tied");
  r.arch = arch_of({L, h, nh, nkv, hd, ffn, V, c.count_or({"max_position_embeddings"}, 0)});
  TransformerArch& a = r.arch;
  a.activation = "gelu";
  a.norm = "layernorm";
  a.tied_embeddings = tied;
  a.hidden_dropout = c.real({"hidden_dropout"}).value_or(0.0);
  a.attention_dropout = c.real({"attention_dropout"}).value_or(0.0);
  count(r, layout);
  return r;
}

}  // namespace memplan::detail
