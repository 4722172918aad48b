// What a GGUF file says about the model: parameters, exact weight bytes, the architecture from
// general.architecture and its <arch>.* keys.
#include "core/models/gguf.hpp"

#include <algorithm>

#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"
#include "core/models/arch_limits.hpp"

namespace memplan {
namespace {

using nlohmann::json;

// A whole number >= 0 from the metadata: a scalar, or the largest of a per-layer array.
uint64_t meta_count(const GgufFile& g, const std::string& key, std::vector<std::string>& notes) {
  auto it = g.metadata.find(key);
  if (it == g.metadata.end()) return 0;
  if (it->is_number_unsigned()) return it->get<uint64_t>();
  if (it->is_number_integer()) return std::max<int64_t>(0, it->get<int64_t>());
  if (it->is_array()) {
    uint64_t best = 0;
    for (const json& v : *it)
      if (v.is_number_unsigned()) best = std::max(best, v.get<uint64_t>());
    notes.push_back(key + " varies per layer: the largest, " + std::to_string(best) + ", was used");
    return best;
  }
  return 0;
}

bool has_tensor(const GgufFile& g, std::string_view prefix) {
  for (const GgufTensor& t : g.tensors)
    if (t.name.rfind(prefix, 0) == 0) return true;
  return false;
}

// What the KV cache needs beyond heads and key_length, from llama.cpp's keys (llama-model.cpp
// load_hparams): DeepSeek-2's latent attention (kv_lora_rank with key_length_mla: the MLA
// conversion, whose cache holds one K row of key_length = kv_lora_rank + rope), a V narrower than
// K (value_length: older DeepSeek GGUFs, 192 and 128 per head), and the sliding window of the
// architectures llama.cpp gives one, with their set_swa_pattern: all but the last of each run of
// `pattern` layers are windowed.
void read_attention_kinds(const GgufFile& g, const std::string& p, TransformerArch& a,
                          std::vector<std::string>& notes) {
  const uint64_t kv_lora = meta_count(g, p + "attention.kv_lora_rank", notes);
  const uint64_t k_mla = meta_count(g, p + "attention.key_length_mla", notes);
  const uint64_t rope = meta_count(g, p + "rope.dimension_count", notes);
  const uint64_t v_len = meta_count(g, p + "attention.value_length", notes);
  if (kv_lora && k_mla > rope) {
    a.kv_lora_rank = kv_lora;
    a.q_lora_rank = meta_count(g, p + "attention.q_lora_rank", notes);
    a.qk_rope_head_dim = rope;
    a.qk_nope_head_dim = k_mla - rope;
    a.v_head_dim = meta_count(g, p + "attention.value_length_mla", notes);
    a.kv_heads = a.heads;  // stored as one shared latent (head_count_kv 1); per head for the counts
    a.head_dim = k_mla;
    notes.push_back("multi-head latent attention: the cache holds one " + std::to_string(kv_lora + rope) +
                    "-wide K row per token and layer");
  } else if (v_len && a.head_dim && v_len != a.head_dim) {
    a.v_head_dim = v_len;
  }
  static const std::pair<const char*, uint64_t> patterns[] = {
      {"gemma2", 2}, {"gemma3", 6}, {"cohere2", 4}, {"gpt-oss", 2}};
  const uint64_t window = meta_count(g, p + "attention.sliding_window", notes);
  for (const auto& [arch, pattern] : patterns)
    if (window && a.model_type == arch && a.layers) {
      a.attention_window = window;
      a.window_layers = a.layers - a.layers / pattern;
    }
}

}  // namespace

ModelSpec model_spec_of(const GgufFile& g) {
  ModelSpec s;
  s.id = g.file;
  s.name = g.file;
  s.source = "GGUF header of " + g.file;
  if (auto n = g.metadata.find("general.name"); n != g.metadata.end() && n->is_string())
    s.name = n->get<std::string>();

  uint64_t bytes = 0, params = 0, expert_elements = 0;
  for (const GgufTensor& t : g.tensors) {
    params = checked_add(params, t.elements, "GGUF elements");
    bytes = checked_add(bytes, t.bytes, "GGUF bytes");
    if (t.name.find("_exps.") != std::string::npos) expert_elements += t.elements;
  }
  s.parameters = params;
  s.tensors = g.tensors.size();
  s.weight_bytes = bytes;

  std::vector<GgufTypeTotal> totals = gguf_type_totals(g);
  if (!totals.empty()) {
    const GgufType* top = nullptr;
    for (const GgufType& t : gguf_types())
      if (totals.front().type == t.name) top = &t;
    std::string mix;
    for (size_t i = 0; i < totals.size(); ++i)
      mix += (i ? ", " : "") + totals[i].type + " " + format_bytes(totals[i].bytes, Units::gib);
    if (totals.size() == 1 && top->storage_format[0]) {
      s.weight_format = top->storage_format;
      s.notes.push_back("weights stored as " + s.weight_format + " (" + totals.front().type +
                        "): the default weight precision");
    } else if (top->storage_format[0] && totals.front().bytes * 10 >= bytes * 9) {
      s.weight_format = top->storage_format;
      s.notes.push_back("weights stored as " + mix + ": " + s.weight_format + " taken as the weight format");
    } else {
      s.notes.push_back("weights stored as " + mix + " (" + group_thousands(bytes) +
                        " bytes exactly; quantised blocks, no single format)");
    }
  }

  auto at = g.metadata.find("general.architecture");
  if (at == g.metadata.end() || !at->is_string()) {
    s.notes.push_back("no general.architecture: architecture unknown");
    return s;
  }
  const std::string arch = at->get<std::string>();
  const std::string p = arch + ".";
  TransformerArch a;
  a.model_type = arch;
  a.layers = meta_count(g, p + "block_count", s.notes);
  a.hidden = meta_count(g, p + "embedding_length", s.notes);
  a.heads = meta_count(g, p + "attention.head_count", s.notes);
  a.kv_heads = meta_count(g, p + "attention.head_count_kv", s.notes);
  if (!a.kv_heads) a.kv_heads = a.heads;
  a.head_dim = meta_count(g, p + "attention.key_length", s.notes);
  a.intermediate = meta_count(g, p + "feed_forward_length", s.notes);
  a.max_positions = meta_count(g, p + "context_length", s.notes);
  a.vocab = meta_count(g, p + "vocab_size", s.notes);
  if (!a.vocab) {
    auto tok = g.metadata.find("tokenizer.ggml.tokens");
    if (tok != g.metadata.end() && tok->is_object() && tok->contains("length"))
      a.vocab = (*tok)["length"].get<uint64_t>();
    else if (tok != g.metadata.end() && tok->is_array())
      a.vocab = tok->size();
  }
  a.experts = meta_count(g, p + "expert_count", s.notes);
  a.experts_per_token = meta_count(g, p + "expert_used_count", s.notes);
  read_attention_kinds(g, p, a, s.notes);
  a.gated_mlp = has_tensor(g, "blk.0.ffn_gate");
  const bool gemma = arch.rfind("gemma", 0) == 0;
  a.activation = a.gated_mlp && !gemma ? "silu" : "gelu";
  a.norm = g.metadata.contains(p + "attention.layer_norm_rms_epsilon") ? "rmsnorm" : "layernorm";
  a.tied_embeddings = !has_tensor(g, "output.weight");
  static const char* encoders[] = {"bert", "nomic-bert", "jina-bert-v2", "t5encoder"};
  for (const char* e : encoders)
    if (arch == e) a.causal = false;
  if (arch == "t5") {
    a.causal = false;
    a.encoder_decoder = true;
    s.notes.push_back("t5 is an encoder-decoder: block_count is taken for both stacks");
    a.decoder_layers = a.layers;
  }
  if (a.experts && a.experts_per_token && a.experts_per_token <= a.experts) {
    // Expert tensors (ffn_*_exps) hold all experts; per token only expert_used_count of them run.
    uint64_t idle = static_cast<uint64_t>(
        (static_cast<u128>(expert_elements) * (a.experts - a.experts_per_token)) / a.experts);
    s.active_parameters = params - idle;
  }
  std::vector<std::string> missing;
  if (!a.layers) missing.push_back("block_count");
  if (!a.hidden) missing.push_back("embedding_length");
  if (!a.heads) missing.push_back("attention.head_count");
  if (!missing.empty()) {
    std::string m;
    for (size_t i = 0; i < missing.size(); ++i) m += (i ? ", " : "") + p + missing[i];
    s.notes.push_back("architecture incomplete: no " + m);
  }
  s.notes.push_back("architecture from the GGUF metadata (" + arch + ")");
  check_arch_limits(a, g.file);
  s.arch = a;
  return s;
}

}  // namespace memplan
