// Attention kinds per layer from config.json: which layers attend over a window (sliding or
// chunked) and which over the whole context, by `layer_types` where the config lists it, else by
// the family's own rule in its transformers module; plus the fields that change no memory but
// are read rather than ignored (soft-capping, sinks, q/k norms). Then the per-kind rows that
// `inspect` prints.
#include <algorithm>
#include <string>

#include "core/base/text.hpp"
#include "core/models/hf_config_reader.hpp"

namespace memplan::detail {

namespace {

// How a family without `layer_types` places its windowed layers.
enum class WindowRule {
  none,     // every layer attends to the whole context; sliding_window must be absent or null
  all,      // every layer slides when sliding_window is set (Mistral, Mixtral, Phi-3, StarCoder2)
  qwen,     // use_sliding_window: layers from max_window_layers on slide
  even,     // layers 0, 2, 4, ... slide (Gemma 2, gpt-oss)
  pattern,  // every sliding_window_pattern-th layer is full, the others slide (Gemma 3, Cohere 2)
  llama4,   // chunked attention except the NoPE layers (no_rope_layers 0, else every 4th)
};

struct FamilyRule {
  const char* model_type;
  WindowRule rule;
  uint64_t default_pattern;  // WindowRule::pattern only
};

constexpr FamilyRule k_rules[] = {
    {"mistral", WindowRule::all, 0},
    {"mixtral", WindowRule::all, 0},
    {"phi3", WindowRule::all, 0},
    {"phimoe", WindowRule::all, 0},
    {"starcoder2", WindowRule::all, 0},
    {"qwen2", WindowRule::qwen, 0},
    {"qwen2_moe", WindowRule::qwen, 0},
    {"qwen3", WindowRule::qwen, 0},
    {"qwen3_moe", WindowRule::qwen, 0},
    {"gemma2", WindowRule::even, 0},
    {"gpt_oss", WindowRule::even, 0},
    {"gemma3", WindowRule::pattern, 6},
    {"gemma3_text", WindowRule::pattern, 6},
    {"cohere2", WindowRule::pattern, 4},
    {"llama4", WindowRule::llama4, 0},
    {"llama4_text", WindowRule::llama4, 0},
};

WindowRule rule_of(const std::string& mt, uint64_t& pattern) {
  for (const FamilyRule& f : k_rules)
    if (mt == f.model_type) {
      pattern = f.default_pattern;
      return f.rule;
    }
  return WindowRule::none;
}

// layer_types as written by transformers: counts of each kind; Error on a kind memplan does not
// count or a length other than num_hidden_layers.
void read_layer_types(ConfigReader& c, TransformerArch& a, const nlohmann::json& types, std::string& fields) {
  if (!types.is_array() || types.size() != a.layers)
    c.fail("layer_types", "is not a list of " + to_s(a.layers) + " attention kinds (one per layer)");
  uint64_t sliding = 0, chunked = 0;
  for (const nlohmann::json& t : types) {
    const std::string s = t.is_string() ? t.get<std::string>() : t.dump();
    if (s == "sliding_attention")
      ++sliding;
    else if (s == "chunked_attention")
      ++chunked;
    else if (s != "full_attention")
      c.fail("layer_types", "holds \"" + s +
                                "\", an attention kind memplan does not count (expected full_attention, "
                                "sliding_attention or chunked_attention)");
  }
  if (sliding && chunked)
    c.fail("layer_types", "mixes sliding and chunked layers (memplan counts one window)");
  fields = "layer_types";
  if (sliding) {
    a.window_layers = sliding;
    a.attention_window = c.need({"sliding_window"});
    fields += ", sliding_window";
  } else if (chunked) {
    a.window_layers = chunked;
    a.chunked_attention = true;
    a.attention_window = c.need({"attention_chunk_size"});
    fields += ", attention_chunk_size";
  }
}

// The family's rule when the config has no layer_types.
void read_window_rule(ConfigReader& c, const std::string& mt, TransformerArch& a, std::string& fields) {
  uint64_t pattern = 0;
  const WindowRule rule = rule_of(mt, pattern);
  if (rule == WindowRule::llama4) {
    a.attention_window = c.count_or({"attention_chunk_size"}, 0);
    if (!a.attention_window) return;
    a.chunked_attention = true;
    fields = "attention_chunk_size";
    const nlohmann::json& j = c.json();
    auto it = j.find("no_rope_layers");
    if (it != j.end() && it->is_array() && !it->empty()) {
      if (it->size() != a.layers) c.fail("no_rope_layers", "is not a list of " + to_s(a.layers) + " flags");
      for (const nlohmann::json& v : *it)
        if (v.is_number() && v.get<double>() != 0) ++a.window_layers;  // rotary layers are chunked
      c.count({"attention_chunk_size"});
      fields += ", no_rope_layers";
    } else {
      a.window_layers = a.layers - a.layers / 4;  // NoPE (full) every 4th layer: transformers' default
      fields += " (every 4th layer full: transformers' default no_rope_layers)";
    }
    return;
  }
  const auto window = c.count({"sliding_window"});
  if (!window) return;
  if (*window == 0) c.fail("sliding_window", "is 0 (expected a window in tokens, or null)");
  fields = "sliding_window";
  switch (rule) {
    case WindowRule::none:
      c.fail("sliding_window", to_s(*window) +
                                   " is set, but memplan does not know which layers of model_type \"" + mt +
                                   "\" use it");
    case WindowRule::all:
      a.window_layers = a.layers;
      break;
    case WindowRule::qwen:
      if (!c.flag_or({"use_sliding_window"}, false)) {
        fields.clear();  // sliding_window is inert without use_sliding_window
        return;
      }
      a.window_layers = a.layers - std::min(a.layers, c.count_or({"max_window_layers"}, a.layers));
      fields += ", use_sliding_window, max_window_layers";
      break;
    case WindowRule::even:
      a.window_layers = (a.layers + 1) / 2;
      fields += " (layers 0, 2, 4, ... slide)";
      break;
    case WindowRule::pattern: {
      const uint64_t p = c.count_or({"sliding_window_pattern"}, pattern);
      if (p == 0) c.fail("sliding_window_pattern", "is 0 (expected at least 1)");
      a.window_layers = a.layers - a.layers / p;
      fields += ", sliding_window_pattern " + to_s(p);
      break;
    }
    case WindowRule::llama4:
      break;
  }
  a.attention_window = a.window_layers ? *window : 0;
}

// Cached elements per token in one layer: the latent (kv_lora_rank + qk_rope_head_dim) for MLA,
// else k and v of every kv head.
uint64_t kv_elements(const TransformerArch& a) {
  if (a.mla()) return a.kv_lora_rank + a.qk_rope_head_dim;
  return (Count(2) * a.resolved_kv_heads() * a.resolved_head_dim()).v;
}

}  // namespace

void read_attention_kinds(ConfigReader& c, const std::string& mt, FamilyCount& r) {
  TransformerArch& a = r.arch;
  std::string fields;
  auto types = c.json().find("layer_types");
  if (types != c.json().end() && !types->is_null()) {
    read_layer_types(c, a, *types, fields);
  } else {
    read_window_rule(c, mt, a, fields);
  }
  if (a.window_layers)
    r.notes.push_back(to_s(a.window_layers) + " of " + to_s(a.layers) + " layers attend " +
                      (a.chunked_attention ? "within chunks of " : "to the last ") +
                      to_s(a.attention_window) + " tokens (" + fields +
                      "): their KV cache holds at most that many");
  if (auto v = c.real({"attn_logit_softcapping"}); v && *v > 0.0) {
    a.attn_softcap = *v;
    r.notes.push_back("attn_logit_softcapping " + std::to_string(*v) +
                      ": eager attention keeps tanh's heads x s x s output per layer (sdpa/flash: none)");
  }
  if (auto v = c.real({"final_logit_softcapping"}); v && *v > 0.0) {
    a.final_softcap = *v;
    r.notes.push_back("final_logit_softcapping " + std::to_string(*v) +
                      ": the loss keeps tanh's batch x seq x vocab output");
  }
  if (a.attention_sinks) r.notes.push_back("attention sinks: one logit per head, no cache memory");
  if (auto qk = c.flag({"use_qk_norm"}); qk && *qk)
    r.notes.push_back("use_qk_norm: parameter-free L2 norms on q and k (no parameters, no cache)");
  if (r.mlp_fields.empty()) r.mlp_fields = "intermediate_size";
}

std::vector<LayerKind> layer_kinds(const FamilyCount& r) {
  const TransformerArch& a = r.arch;
  std::vector<LayerKind> out;
  if (a.encoder_decoder) return out;
  const ParameterCount pc = count_parameters(a, r.layout);
  const uint64_t ew = a.expert_intermediate ? a.expert_intermediate : a.intermediate;
  if (a.experts) {
    std::string what = "attention " + to_s(pc.layer.attention) + " + " + to_s(a.experts) + " experts x " +
                       to_s(ew) + " wide";
    if (a.shared_intermediate) what += " + shared " + to_s(a.shared_intermediate) + " wide";
    what += " + router " + to_s(pc.layer.router) + " + norms and biases; " + to_s(a.experts_per_token) +
            " experts per token";
    out.push_back({"moe", a.moe_layers(), pc.layer.total(), 0, 0, what, r.mlp_fields});
    if (a.dense_layers) {
      const uint64_t dw = a.dense_intermediate ? a.dense_intermediate : a.intermediate;
      out.push_back({"dense", a.dense_layers, pc.dense_layer.total(), 0, 0,
                     "attention " + to_s(pc.dense_layer.attention) + " + MLP " + to_s(dw) + " wide",
                     r.mlp_fields});
    }
  } else {
    out.push_back(
        {"dense", a.layers, pc.layer.total(), 0, 0,
         "attention " + to_s(pc.layer.attention) + " + MLP " + to_s(pc.layer.mlp) + " + norms and biases",
         "intermediate_size"});
  }
  if (a.mtp_layers)
    out.push_back({"mtp", a.mtp_layers, pc.mtp / a.mtp_layers, 0, 0,
                   "norms, eh_proj 2h x h, one MoE layer, its own embedding and head (not in the total)",
                   "num_nextn_predict_layers"});

  const uint64_t kv = kv_elements(a);
  const std::string cache =
      a.mla() ? "latent cache kv_lora_rank " + to_s(a.kv_lora_rank) + " + qk_rope_head_dim " +
                    to_s(a.qk_rope_head_dim) + " per token (naive per-head cache: heads " + to_s(a.heads) +
                    " x (k " + to_s(a.qk_nope_head_dim + a.qk_rope_head_dim) + " + v " + to_s(a.v_head_dim) +
                    ") = " + to_s(a.heads * (a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim)) + ")"
              : "k and v: 2 x kv_heads " + to_s(a.resolved_kv_heads()) + " x head_dim " +
                    to_s(a.resolved_head_dim()) + " per token";
  const std::string kv_fields = a.mla() ? "kv_lora_rank, qk_rope_head_dim" : "num_key_value_heads, head_dim";
  const uint64_t cross = std::min(a.cross_attention_layers, a.layers - a.window_layers);
  if (a.layers > a.window_layers + cross)
    out.push_back({a.mla() ? "full attention (latent)" : "full attention", a.layers - a.window_layers - cross,
                   0, kv, 0, cache, kv_fields});
  if (cross)
    out.push_back(
        {"cross attention", cross, 0, kv, 0,
         cache + ", over the image features (max_num_tiles x (patches + 1) tokens an image), not the text",
         kv_fields + ", cross_attention_layers"});
  if (a.window_layers)
    out.push_back({a.chunked_attention ? "chunked attention" : "sliding attention", a.window_layers, 0, kv,
                   a.attention_window, cache + ", at most " + to_s(a.attention_window) + " tokens",
                   kv_fields + (a.chunked_attention ? ", attention_chunk_size" : ", sliding_window")});
  return out;
}

}  // namespace memplan::detail
