// Fine-grained mixture of experts, multi-head latent attention and per-layer attention kinds read
// from real config.json files (provenance in tests/data/hf_configs/SOURCES.md). Every expected
// number is a published figure with its source, or the family's cache layout worked out by hand
// in the comment; none is memplan's own output.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include <memplan/error.hpp>
#include "core/base/file_reader.hpp"
#include "core/memory/kv_cache.hpp"
#include "core/models/hf_config.hpp"

using namespace memplan;

namespace {

const std::string k_moe_dir = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/";

// `n` in units of `unit`, rounded to `digits` decimals, as a model card prints it.
double rounded(uint64_t n, double unit, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(static_cast<double>(n) / unit * scale) / scale;
}

std::string moe_error_of(const std::string& text) {
  try {
    parse_hf_config_detail(text, "config.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

const LayerKind* kind(const ModelSpec& m, const std::string& name) {
  for (const LayerKind& k : m.layer_kinds)
    if (k.kind == name) return &k;
  return nullptr;
}

// One sequence's KV cache in bytes at `seq` tokens, 2 bytes per element.
uint64_t moe_kv_bytes(const ModelSpec& m, uint64_t seq) {
  InferenceOptions o;
  o.seq = seq;
  return inference_memory(*m.arch, o).bytes;
}

// The 120b's config with the 20b's three differing fields (OpenAI's model card: 24 layers,
// 32 experts; the 20b's layer_types are the same alternation, 12 x [sliding, full]: 6 of the 18 pairs go).
std::string gpt_oss_20b_text() {
  std::string t = read_small_file(k_moe_dir + "gpt-oss-120b.json", 1 << 20);
  auto replace = [&](const std::string& from, const std::string& to) {
    const size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    t.replace(at, from.size(), to);
  };
  replace("\"num_hidden_layers\": 36", "\"num_hidden_layers\": 24");
  replace("\"num_local_experts\": 128", "\"num_local_experts\": 32");
  for (int i = 0; i < 6; ++i) replace("\"sliding_attention\",\n    \"full_attention\",\n    ", "");
  return t;
}

}  // namespace

TEST_CASE("Qwen3-30B-A3B: total and active parameters", "[hf_config][moe]") {
  const ModelSpec m = read_hf_config(k_moe_dir + "Qwen3-30B-A3B.json");
  // llama.cpp's general.parameter_count of the GGUF conversions: 30,532,122,624; the Hub index's
  // total_size is 61,064,245,248 bytes = 2 x that (bf16). Model card: 30.5B total.
  CHECK(m.parameters == 30532122624ull);
  CHECK(m.parameters * 2 == 61064245248ull);
  // Model card: "3.3B activated" (the card truncates: the count is 3.35B with the embedding).
  CHECK(std::floor(static_cast<double>(m.active_parameters) / 1e8) == 33);
  CHECK(m.arch->experts == 128);
  CHECK(m.arch->experts_per_token == 8);
  CHECK(m.arch->expert_intermediate == 768);
  CHECK(m.arch->dense_layers == 0);
  const LayerKind* moe = kind(m, "moe");
  REQUIRE(moe);
  CHECK(moe->layers == 48);
  CHECK(moe->fields.find("moe_intermediate_size") != std::string::npos);
  // KV cache per token: 48 layers x 2 x 4 kv heads x 128 x 2 B = 98,304 B (no sliding window:
  // use_sliding_window false).
  CHECK(moe_kv_bytes(m, 1) == 98304);
  CHECK(moe_kv_bytes(m, 32768) == 3221225472ull);
}

TEST_CASE("DeepSeek-V3 (R1): 671B main model, MTP apart, latent KV cache", "[hf_config][moe][mla]") {
  const ModelSpec m = read_hf_config(k_moe_dir + "DeepSeek-R1.json");
  // Main-model parameters of the checkpoint's headers (FP8 scale tensors excluded): 671,026,419,200.
  CHECK(m.parameters == 671026419200ull);
  CHECK(m.arch->dense_layers == 3);
  CHECK(m.arch->moe_layers() == 58);
  CHECK(m.arch->mtp_layers == 1);
  // DeepSeek's README_WEIGHTS: the MTP module's transformer block has 11.5B parameters; with its
  // norms, eh_proj and its own embedding and head copies, main + MTP is the Hub's 685B (which
  // also counts 41.5M FP8 scale-inverse tensors: 684.49B + 0.04B).
  const LayerKind* mtp = kind(m, "mtp");
  REQUIRE(mtp);
  CHECK(rounded(kind(m, "moe")->parameters, 1e9, 1) == 11.5);
  CHECK(rounded(m.parameters + m.mtp_parameters + 41546768, 1e9, 0) == 685);
  // Active: DeepSeek counts the output head but not the input embedding: 36.6B ("37B").
  CHECK(rounded(m.active_parameters - m.arch->vocab * m.arch->hidden, 1e9, 1) == 36.6);
  // KV cache: vLLM / SGLang store kv_lora_rank + qk_rope_head_dim = 512 + 64 = 576 elements per
  // token and layer: 61 x 576 x 2 B = 70,272 B per token. The naive per-head cache (transformers'
  // reference path) is 61 x 128 heads x (192 + 128) x 2 B = 4,997,120 B per token.
  CHECK(moe_kv_bytes(m, 1) == 70272);
  InferenceOptions o;
  o.seq = 1;
  CHECK(inference_memory(*m.arch, o).naive_bytes == 4997120);
  const LayerKind* attn = kind(m, "full attention (latent)");
  REQUIRE(attn);
  CHECK(attn->kv_elements_per_token == 576);
  CHECK(attn->fields == "kv_lora_rank, qk_rope_head_dim");
}

TEST_CASE("DeepSeek-V2.5: 236B total, 21B active", "[hf_config][moe][mla]") {
  const ModelSpec m = read_hf_config(k_moe_dir + "DeepSeek-V2.5.json");
  // Model card: 236B total, 21B activated (without the input embedding, as for V3).
  CHECK(rounded(m.parameters, 1e9, 0) == 236);
  CHECK(rounded(m.active_parameters - m.arch->vocab * m.arch->hidden, 1e9, 0) == 21);
  CHECK(m.arch->dense_layers == 1);
  CHECK(m.mtp_parameters == 0);
}

TEST_CASE("gpt-oss: OpenAI's model card counts, alternating 128-token window", "[hf_config][moe]") {
  // Model card table: gpt-oss-120b 116.83B total, 5.13B active; gpt-oss-20b 20.91B, 3.61B.
  // OpenAI counts the unembedding but not the embedding lookup as active.
  const ModelSpec big = read_hf_config(k_moe_dir + "gpt-oss-120b.json");
  CHECK(rounded(big.parameters, 1e9, 2) == 116.83);
  CHECK(rounded(big.active_parameters - big.arch->vocab * big.arch->hidden, 1e9, 2) == 5.13);
  const ModelSpec small = parse_hf_config_detail(gpt_oss_20b_text(), "gpt-oss-20b/config.json").model;
  CHECK(rounded(small.parameters, 1e9, 2) == 20.91);
  CHECK(rounded(small.active_parameters - small.arch->vocab * small.arch->hidden, 1e9, 2) == 3.61);

  // layer_types: 18 sliding (128 tokens) and 18 full layers; 2 x 8 kv heads x 64 = 1,024
  // elements per token and layer. At 8,192 tokens in bf16:
  //   (18 x 8,192 + 18 x 128) x 1,024 x 2 B = 306,708,480 B (not 36 x 8,192 x 2,048 = 603,979,776).
  CHECK(big.arch->window_layers == 18);
  CHECK(big.arch->attention_window == 128);
  CHECK(moe_kv_bytes(big, 8192) == 306708480ull);
  CHECK(moe_kv_bytes(big, 100) == 36ull * 100 * 2048);  // shorter than the window: every layer holds all
  const LayerKind* sliding = kind(big, "sliding attention");
  REQUIRE(sliding);
  CHECK(sliding->layers == 18);
  CHECK(sliding->window == 128);
  CHECK(sliding->fields == "num_key_value_heads, head_dim, sliding_window");
}

TEST_CASE("Mistral-7B-v0.1: the 4096-token window holds the KV cache", "[hf_config][attention]") {
  const ModelSpec m = read_hf_config(k_moe_dir + "Mistral-7B-v0.1.json");
  CHECK(m.arch->window_layers == 32);
  CHECK(m.arch->attention_window == 4096);
  // Rolling buffer of 4,096 tokens: 32 layers x 4,096 x 2 x 8 x 128 x 2 B = 536,870,912 B at any
  // longer context; below the window it grows with the tokens.
  CHECK(moe_kv_bytes(m, 8192) == 536870912ull);
  CHECK(moe_kv_bytes(m, 1000) == 32ull * 1000 * 4096);
  // Mistral-7B-v0.3 has sliding_window null: full attention.
  CHECK(read_hf_config(k_moe_dir + "Mistral-7B-Instruct-v0.3.json").arch->window_layers == 0);
}

TEST_CASE("Qwen2: sliding_window without use_sliding_window changes nothing", "[hf_config][attention]") {
  const ModelSpec m = read_hf_config(k_moe_dir + "Qwen2.5-7B.json");
  CHECK(m.arch->window_layers == 0);
  // With use_sliding_window, layers from max_window_layers on slide (transformers' Qwen2Config).
  const ModelSpec w = parse_hf_config_detail(R"({"model_type": "qwen2", "vocab_size": 100, "hidden_size": 64,
      "num_hidden_layers": 8, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
      "sliding_window": 16, "use_sliding_window": true, "max_window_layers": 6})",
                                             "config.json")
                          .model;
  CHECK(w.arch->window_layers == 2);
  CHECK(w.arch->attention_window == 16);
}

TEST_CASE("per-layer attention kinds: rules and refusals", "[hf_config][attention]") {
  // A layer_types entry memplan does not count is refused, naming it.
  CHECK(moe_error_of(
            R"({"model_type": "qwen3_moe", "vocab_size": 100, "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 128, "num_experts": 4, "num_experts_per_tok": 2,
      "moe_intermediate_size": 32, "layer_types": ["full_attention", "linear_attention"]})") ==
        "config.json: layer_types: holds \"linear_attention\", an attention kind memplan does not count "
        "(expected full_attention, sliding_attention or chunked_attention)");
  // A sliding_window on a family whose interleaving memplan does not know is refused, not ignored.
  CHECK(moe_error_of(R"({"model_type": "llama", "vocab_size": 100, "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 128, "sliding_window": 512})") ==
        "config.json: sliding_window: 512 is set, but memplan does not know which layers of model_type "
        "\"llama\" use it");
  // DeepSeek with biases on the latent projections: a field memplan cannot count, refused.
  CHECK(
      moe_error_of(
          R"({"model_type": "deepseek_v3", "vocab_size": 100, "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 128, "n_routed_experts": 4, "num_experts_per_tok": 2,
      "moe_intermediate_size": 32, "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8,
      "v_head_dim": 8, "attention_bias": true})") ==
      "config.json: attention_bias: true: memplan does not count biases on the latent-attention projections");
  // Qwen-MoE's dense layers: decoder_sparse_step and mlp_only_layers.
  const ModelSpec g =
      parse_hf_config_detail(R"({"model_type": "qwen3_moe", "vocab_size": 100, "hidden_size": 64,
      "num_hidden_layers": 4, "num_attention_heads": 4, "intermediate_size": 128, "num_experts": 4,
      "num_experts_per_tok": 2, "moe_intermediate_size": 32, "decoder_sparse_step": 2, "mlp_only_layers": [2]})",
                             "config.json")
          .model;
  // decoder_sparse_step 2: layers 1 and 3 are MoE, 0 and 2 dense (2 is also in mlp_only_layers).
  CHECK(g.arch->dense_layers == 2);
  REQUIRE(kind(g, "dense"));
  CHECK(kind(g, "dense")->layers == 2);
  CHECK(kind(g, "moe")->layers == 2);
}

TEST_CASE("more MoE families: published totals and active counts", "[hf_config][moe]") {
  // No copy of these config.json files was found in the stored sources: each text below holds
  // the official config's architecture fields (as the model cards and papers list them), so the
  // test checks the counting rule of each family against its published figures.
  struct Case {
    const char* name;
    const char* json;
    double total, active;  // published, in billions
    int digits;            // as printed (every card here counts the embedding as active)
  };
  static const Case cases[] = {
      // OLMoE paper / model card: 6.9B total (Hub: 6.92B), 1.3B active.
      {"OLMoE-1B-7B",
       R"({"model_type": "olmoe", "vocab_size": 50304, "hidden_size": 2048, "intermediate_size": 1024,
          "num_hidden_layers": 16, "num_attention_heads": 16, "num_key_value_heads": 16, "num_experts": 64,
          "num_experts_per_tok": 8, "tie_word_embeddings": false})",
       6.92, 1.28, 2},
      // Phi-3.5-MoE model card: 41.9B total, 6.6B active (LayerNorms, q/k/v/o and lm_head biases).
      {"Phi-3.5-MoE",
       R"({"model_type": "phimoe", "vocab_size": 32064, "hidden_size": 4096, "intermediate_size": 6400,
          "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "num_local_experts": 16,
          "num_experts_per_tok": 2, "attention_bias": true, "lm_head_bias": true, "tie_word_embeddings": false,
          "sliding_window": 131072})",
       41.9, 6.6, 1},
      // Qwen1.5-MoE-A2.7B model card: 14.3B total, 2.7B activated.
      {"Qwen1.5-MoE-A2.7B", R"({"model_type": "qwen2_moe", "vocab_size": 151936, "hidden_size": 2048,
          "intermediate_size": 5632, "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
          "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16, "num_experts": 60,
          "num_experts_per_tok": 4, "decoder_sparse_step": 1, "mlp_only_layers": [], "tie_word_embeddings": false})",
       14.3, 2.7, 1},
      // Qwen2-57B-A14B: 57B total, 14B activated.
      {"Qwen2-57B-A14B", R"({"model_type": "qwen2_moe", "vocab_size": 151936, "hidden_size": 3584,
          "intermediate_size": 18944, "moe_intermediate_size": 2560, "shared_expert_intermediate_size": 20480,
          "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "num_experts": 64,
          "num_experts_per_tok": 8, "tie_word_embeddings": false})",
       57, 14, 0},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const ModelSpec m = parse_hf_config_detail(c.json, "config.json").model;
    CHECK(rounded(m.parameters, 1e9, c.digits) == c.total);
    CHECK(rounded(m.active_parameters, 1e9, c.digits) == c.active);
  }
}

TEST_CASE("Llama 4: chunked attention on the rotary layers", "[hf_config][attention]") {
  const ModelSpec m = parse_hf_config_detail(R"({"model_type": "llama4_text", "vocab_size": 202048,
      "hidden_size": 5120, "intermediate_size": 8192, "intermediate_size_mlp": 16384, "num_hidden_layers": 48,
      "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "num_local_experts": 16,
      "num_experts_per_tok": 1, "interleave_moe_layer_step": 1, "attention_chunk_size": 8192,
      "tie_word_embeddings": false})",
                                             "config.json")
                          .model;
  // Scout: 16 experts in all 48 layers; 17B active (model card: 17B active, 109B with vision).
  CHECK(rounded(m.active_parameters, 1e9, 0) == 17);
  // Every 4th layer is NoPE with global attention (12), the other 36 attend within 8,192-token
  // chunks. At 32,768 tokens: (12 x 32,768 + 36 x 8,192) x 2 x 8 x 128 x 2 B = 2,818,572,288 B.
  CHECK(m.arch->window_layers == 36);
  CHECK(m.arch->chunked_attention);
  CHECK(moe_kv_bytes(m, 32768) == 2818572288ull);
}

TEST_CASE("gpt-oss-20b read end to end: parameters and stored bytes as published",
          "[hf_config][moe][quantization]") {
  // The gpt_oss family (experts, sinks, biases) and quantization_config's mxfp4 together:
  // 20,914,757,184 parameters (keras-hub gpt_oss_20b_en) and 13,761,264,768 bytes, the
  // metadata.total_size of openai/gpt-oss-20b's model.safetensors.index.json.
  const ModelSpec m = read_hf_config(k_moe_dir + "gpt-oss-20b.json");
  CHECK(m.parameters == 20914757184ull);
  CHECK(m.weight_format == "mxfp4");
  CHECK(m.weight_bytes == 13761264768ull);
}
