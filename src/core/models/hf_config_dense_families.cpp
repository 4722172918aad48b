// Today's dense decoder families. Each reads its sizes, states the block as a ParameterLayout for
// the one parameter counter (parameter_count.hpp), and adds by name what that layout has no field
// for: q/k norms, an output-layer bias. Module facts from transformers' modeling_<family>.py.
#include "core/models/hf_config_dense_families.hpp"

#include <string>

#include "core/base/checked.hpp"
#include "core/base/text.hpp"
#include "core/models/parameter_count.hpp"

namespace memplan::detail {

namespace {

// The sizes every decoder reads, with the key spellings of old and new configs.
struct Sizes {
  uint64_t vocab, hidden, layers, heads, kv_heads, head_dim, intermediate, positions;
};

Sizes read_sizes(ConfigReader& c, FamilyCount& r, uint64_t default_intermediate_per_hidden = 0) {
  Sizes s{};
  s.vocab = c.need({"vocab_size"});
  s.hidden = c.need({"hidden_size", "n_embd"});
  s.layers = c.need({"num_hidden_layers", "n_layer"});
  s.heads = c.need({"num_attention_heads", "n_head"});
  if (auto v = c.count({"num_key_value_heads", "n_head_kv"})) {
    s.kv_heads = *v;
  } else {
    s.kv_heads = s.heads;
    r.notes.push_back("no num_key_value_heads: multi-head attention (kv heads = heads = " + to_s(s.heads) +
                      ")");
  }
  if (s.kv_heads == 0 || s.heads % s.kv_heads != 0)
    c.fail("num_key_value_heads", to_s(s.kv_heads) + " does not divide num_attention_heads " + to_s(s.heads));
  s.head_dim = s.hidden / s.heads;
  if (auto v = c.count({"head_dim"})) {
    if (*v == 0) c.fail("head_dim", "is 0 (expected at least 1)");
    s.head_dim = *v;
    if (*v * s.heads != s.hidden)
      r.notes.push_back("head_dim " + to_s(*v) + " is not hidden_size / heads (" + to_s(s.hidden) + " / " +
                        to_s(s.heads) + "): q and o are " + to_s(*v * s.heads) + " wide");
  }
  if (default_intermediate_per_hidden) {
    s.intermediate = c.count_or({"intermediate_size", "n_inner"}, s.hidden * default_intermediate_per_hidden);
  } else {
    s.intermediate = c.need({"intermediate_size"});
  }
  s.positions = c.count_or({"max_position_embeddings", "n_positions"}, 0);
  return s;
}

TransformerArch arch_of(const Sizes& s, const std::string& model_type, const char* norm, bool gated,
                        bool tied) {
  TransformerArch a;
  a.model_type = model_type;
  a.layers = s.layers;
  a.hidden = s.hidden;
  a.heads = s.heads;
  a.kv_heads = s.kv_heads;
  a.head_dim = s.head_dim;
  a.intermediate = s.intermediate;
  a.vocab = s.vocab;
  a.max_positions = s.positions;
  a.norm = norm;
  a.gated_mlp = gated;
  a.tied_embeddings = tied;
  return a;
}

// Counts r.arch built as `layout` (layout_of(r.arch) plus what the config adds).
void finish(FamilyCount& r, const ParameterLayout& layout) {
  const ParameterCount pc = count_parameters(r.arch, layout);
  r.total = pc.total;
  r.tensors = pc.tensors;
  r.active = 0;
  r.layout = layout;
}

void qk_norm_note(const ParameterLayout& l, FamilyCount& r, const std::string& what) {
  if (l.qk_norm_width) r.notes.push_back(what + ": " + to_s(l.qk_norm_width) + " parameters per layer");
}

void sliding_note(ConfigReader& c, FamilyCount& r) {
  if (auto w = c.count({"sliding_window"}); w && c.flag_or({"use_sliding_window"}, true))
    r.notes.push_back("sliding_window " + to_s(*w) + ": some layers attend to at most " + to_s(*w) +
                      " tokens");
}

}  // namespace

void apply_dense_family(std::string_view mt, const TransformerArch& a, ParameterLayout& l) {
  const uint64_t hd = a.resolved_head_dim();
  const uint64_t per_head = checked_mul(2, hd, "parameter count");
  const uint64_t all_heads =
      checked_mul(checked_add(a.heads, a.resolved_kv_heads(), "parameter count"), hd, "parameter count");
  if (mt == "qwen3") {
    l.qk_norm_width = per_head;  // q_norm, k_norm: RMSNorm(head_dim)
  } else if (mt == "gemma2") {
    l.norms_per_layer = 4;  // input, post_attention, pre_feedforward, post_feedforward
  } else if (mt == "gemma3_text" || mt == "gemma3") {
    l.norms_per_layer = 4;
    l.qk_norm_width = per_head;
  } else if (mt == "phi" || mt == "phi-msft") {
    l.norms_per_layer = 1;  // one input_layernorm before parallel attention and MLP
    l.head_bias = true;
  } else if (mt == "cohere") {
    l.norms_per_layer = 1;
    l.norm_tensors = 1;  // CohereLayerNorm has no bias
  } else if (mt == "olmo2") {
    l.qk_norm_width = all_heads;  // q_norm over heads x head_dim, k_norm over kv_heads x head_dim
  } else if (mt == "phimoe") {
    // A bare architecture (a preset) states no attention_bias / lm_head_bias: Phi-3.5-MoE-instruct,
    // the published phimoe model, sets both (its config.json); a config.json is read as written.
    l.qkv_bias = l.out_bias = true;
    l.head_bias = true;
  } else if (mt == "glm4") {
    l.norms_per_layer = 4;  // input, post_self_attn, post_attention, post_mlp
    l.fused_gate_up = true;
    l.qkv_bias = true;
    l.out_bias = l.mlp_bias = false;
  }
}

// qwen3 (Qwen3ForCausalLM): llama-style block with q/k RMSNorms per head; attention_bias
// (default false) on q, k, v and o.
FamilyCount count_qwen3(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  const Sizes s = read_sizes(c, r);
  const bool tied = tied_embeddings(c, mt, r.notes);
  r.arch = arch_of(s, mt, "rmsnorm", true, tied);
  r.arch.activation = c.text({"hidden_act"}).value_or("silu");
  r.arch.attention_dropout = c.real({"attention_dropout"}).value_or(0.0);
  ParameterLayout l = layout_of(r.arch);
  l.qkv_bias = l.out_bias = c.flag_or({"attention_bias"}, false);
  qk_norm_note(l, r, mt + ": q_norm and k_norm (RMSNorm over head_dim " + to_s(s.head_dim) + ")");
  r.arch.qk_norm = "head";
  sliding_note(c, r);
  finish(r, l);
  return r;
}

// gemma2 (Gemma2DecoderLayer): four RMSNorms per layer (input, post_attention,
// pre_feedforward, post_feedforward), GeGLU MLP, lm_head tied, head_dim from the config.
FamilyCount count_gemma2(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  const Sizes s = read_sizes(c, r);
  const bool tied = c.flag_or({"tie_word_embeddings"}, true);
  r.arch = arch_of(s, mt, "rmsnorm", true, tied);
  r.arch.activation = c.text({"hidden_activation", "hidden_act"}).value_or("gelu_pytorch_tanh");
  ParameterLayout l = layout_of(r.arch);
  l.qkv_bias = l.out_bias = c.flag_or({"attention_bias"}, false);
  r.notes.push_back(mt + ": 4 RMSNorms per layer (input, post_attention, pre_feedforward, post_feedforward)");
  if (auto cap = c.real({"attn_logit_softcapping"}))
    r.notes.push_back("attn_logit_softcapping " + std::to_string(*cap) + " (no parameters)");
  sliding_note(c, r);
  finish(r, l);
  return r;
}

// gemma3_text (Gemma3ForCausalLM, and Gemma 3's text_config): gemma2's block plus q/k RMSNorms per head.
FamilyCount count_gemma3_text(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  const Sizes s = read_sizes(c, r);
  const bool tied = c.flag_or({"tie_word_embeddings"}, true);
  r.arch = arch_of(s, mt, "rmsnorm", true, tied);
  r.arch.activation = c.text({"hidden_activation", "hidden_act"}).value_or("gelu_pytorch_tanh");
  ParameterLayout l = layout_of(r.arch);
  l.qkv_bias = l.out_bias = c.flag_or({"attention_bias"}, false);
  r.notes.push_back(mt + ": 4 RMSNorms per layer (input, post_attention, pre_feedforward, post_feedforward)");
  qk_norm_note(l, r, mt + ": q_norm and k_norm (RMSNorm over head_dim " + to_s(s.head_dim) + ")");
  r.arch.qk_norm = "head";
  sliding_note(c, r);
  finish(r, l);
  return r;
}

// phi (PhiForCausalLM: Phi-1, Phi-1.5, Phi-2) and its older remote-code configs (phi-msft):
// attention and MLP in parallel after one LayerNorm, biases on every linear layer, a partial
// rotary embedding (no parameters), and an untied lm_head with a bias.
FamilyCount count_phi(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  const Sizes s = read_sizes(c, r, 4);
  const bool tied = c.flag_or({"tie_word_embeddings"}, false);
  r.arch = arch_of(s, mt, "layernorm", false, tied);
  r.arch.parallel_attention = true;
  r.arch.bias = true;
  r.arch.fused_qkv = mt == "phi-msft";  // Wqkv in the remote code; same count
  r.arch.activation = c.text({"hidden_act", "activation_function"}).value_or("gelu_new");
  ParameterLayout l = layout_of(r.arch);
  if (auto f = c.real({"partial_rotary_factor"}))
    r.notes.push_back("partial_rotary_factor " + std::to_string(*f) +
                      ": rotary on part of each head (no parameters)");
  else if (auto d = c.count({"rotary_dim"}))
    r.notes.push_back("rotary_dim " + to_s(*d) + ": rotary on part of each head (no parameters)");
  r.notes.push_back(mt + ": attention and MLP in parallel after one LayerNorm" +
                    (l.head ? "; lm_head has a bias of " + to_s(s.vocab) : std::string()));
  finish(r, l);
  return r;
}

// starcoder2: q, k, v, o and the two MLP matrices with biases (use_bias), LayerNorms with bias,
// plain (ungated) MLP, lm_head tied unless configured.
FamilyCount count_starcoder2(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  const Sizes s = read_sizes(c, r);
  const bool tied = c.flag_or({"tie_word_embeddings"}, true);
  if (auto t = c.text({"norm_type"}); t && *t != "layer_norm")
    c.fail("norm_type", "\"" + *t + "\" is not layer_norm (the only norm Starcoder2 builds)");
  r.arch = arch_of(s, mt, "layernorm", false, tied);
  r.arch.bias = c.flag_or({"use_bias"}, true);
  r.arch.activation = c.text({"hidden_act"}).value_or("gelu_pytorch_tanh");
  sliding_note(c, r);
  finish(r, layout_of(r.arch));
  return r;
}

// cohere (Command-R, Aya): attention and MLP in parallel after one LayerNorm without bias,
// lm_head tied (scaled by logit_scale); use_qk_norm adds LayerNorms over every q and k head.
FamilyCount count_cohere(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  const Sizes s = read_sizes(c, r);
  const bool tied = c.flag_or({"tie_word_embeddings"}, true);
  r.arch = arch_of(s, mt, "layernorm", true, tied);
  r.arch.parallel_attention = true;
  r.arch.activation = c.text({"hidden_act"}).value_or("silu");
  ParameterLayout l = layout_of(r.arch);
  l.qkv_bias = l.out_bias = c.flag_or({"attention_bias"}, false);
  if (c.flag_or({"use_qk_norm"}, false)) {
    l.qk_norm_width = (Count(Count(s.heads) + s.kv_heads) * s.head_dim).v;
    qk_norm_note(l, r, mt + ": use_qk_norm: q_norm over heads x head_dim, k_norm over kv_heads x head_dim");
    r.arch.qk_norm = "head";  // CohereLayerNorm over (heads, head_dim): each head normalised apart
  }
  r.notes.push_back(mt + ": attention and MLP in parallel after one LayerNorm (weight only)");
  finish(r, l);
  return r;
}

// olmo2: no input norm; RMSNorms after attention and after the MLP; q_norm and k_norm over the
// whole q (heads x head_dim) and k (kv_heads x head_dim) projections.
FamilyCount count_olmo2(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  const Sizes s = read_sizes(c, r);
  const bool tied = c.flag_or({"tie_word_embeddings"}, false);
  r.arch = arch_of(s, mt, "rmsnorm", true, tied);
  r.arch.activation = c.text({"hidden_act"}).value_or("silu");
  ParameterLayout l = layout_of(r.arch);
  l.qkv_bias = l.out_bias = c.flag_or({"attention_bias"}, false);
  r.notes.push_back(mt + ": RMSNorms after attention and after the MLP (none before)");
  qk_norm_note(l, r,
               mt + ": q_norm over " + to_s(s.heads * s.head_dim) + " and k_norm over " +
                   to_s(s.kv_heads * s.head_dim));
  r.arch.qk_norm = "all";
  finish(r, l);
  return r;
}

// glm4 (GLM-4-0414): q, k, v with biases (attention_bias), o without; fused gate_up MLP; four
// RMSNorms per layer (input, post_self_attn, post_attention, post_mlp); partial rotary.
FamilyCount count_glm4(ConfigReader& c, const std::string& mt) {
  FamilyCount r;
  const Sizes s = read_sizes(c, r);
  const bool tied = c.flag_or({"tie_word_embeddings"}, false);
  r.arch = arch_of(s, mt, "rmsnorm", true, tied);
  r.arch.activation = c.text({"hidden_act"}).value_or("silu");
  ParameterLayout l = layout_of(r.arch);
  l.qkv_bias = c.flag_or({"attention_bias"}, true);
  r.notes.push_back(
      mt + ": 4 RMSNorms per layer (input, post_self_attn, post_attention, post_mlp); q, k, v biases" +
      std::string(l.qkv_bias ? "" : " off (attention_bias false)"));
  if (auto f = c.real({"partial_rotary_factor"}))
    r.notes.push_back("partial_rotary_factor " + std::to_string(*f) +
                      ": rotary on part of each head (no parameters)");
  finish(r, l);
  return r;
}

}  // namespace memplan::detail
