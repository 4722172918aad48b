// Families read from their real config.json files (tests/data/hf_configs/SOURCES.md) against
// published integers, and the sliding-window KV cache of Gemma 2 and 3 past the window, worked out
// by hand from each family's cache layout. No expected number is memplan's own output.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include <memplan/presets.hpp>
#include "core/memory/kv_cache.hpp"
#include "core/models/hf_config.hpp"

using namespace memplan;

namespace {

const std::string k_dir = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/";

// One sequence's KV cache in bytes at `seq` tokens, 2 bytes per element.
uint64_t kv_bytes(const ModelSpec& m, uint64_t seq) {
  InferenceOptions o;
  o.seq = seq;
  return inference_memory(*m.arch, o).bytes;
}

}  // namespace

TEST_CASE("Qwen1.5-MoE-A2.7B: the real config gives the published total", "[hf_config][families][moe]") {
  // 14,315,784,192 parameters: keras-hub qwen_moe_presets.py "qwen1.5_moe_2.7b_en" "params"
  // (keras-team/keras-hub @71453d0). Model card: "2.7B activated" parameters.
  const ModelSpec m = read_hf_config(k_dir + "Qwen1.5-MoE-A2.7B.json");
  CHECK(m.parameters == 14315784192ull);
  CHECK(std::round(static_cast<double>(m.active_parameters) / 1e8) / 10 == 2.7);
}

TEST_CASE("Gemma 2: every other layer keeps only its 4096-token window", "[hf_config][families][attention]") {
  // gemma-2-2b: 26 layers, 4 KV heads of 256, sliding_window 4096; transformers' Gemma2 cache
  // gives the 13 sliding layers min(window, tokens) slots and the 13 global layers every token.
  // Per layer and token 2 (K, V) x 4 x 256 x 2 B = 4,096 B. At 8,192 tokens:
  // (13 x 8,192 + 13 x 4,096) x 4,096 B = 654,311,424 B; below the window all 26 layers grow alike.
  const ModelSpec m = read_hf_config(k_dir + "gemma-2-2b.json");
  CHECK(kv_bytes(m, 8192) == 654311424ull);
  CHECK(kv_bytes(m, 2048) == 26ull * 2048 * 4096);
}

TEST_CASE("Gemma 3: five sliding layers in six, 512-token window", "[hf_config][families][attention]") {
  // gemma-3-1b-it: 26 layers, sliding_window 512, sliding_window_pattern 6 (layers 5, 11, 17, 23
  // are global, the other 22 slide); 1 KV head of 256: 2 x 1 x 256 x 2 B = 1,024 B per layer and
  // token. At 4,096 tokens: (4 x 4,096 + 22 x 512) x 1,024 B = 28,311,552 B.
  const ModelSpec m = read_hf_config(k_dir + "gemma-3-1b-it.json");
  CHECK(kv_bytes(m, 4096) == 28311552ull);
}

TEST_CASE("falcon-40b (RefinedWeb): the new decoder architecture, to its index total_size",
          "[hf_config][families]") {
  // tiiuae/falcon-40b's pytorch_model.bin.index.json: metadata.total_size 83,671,941,120 bytes of
  // bf16 (a GitHub copy of the Hub repository, Decentralised-AI/falcon-40b). Its weight_map lists
  // ln_attn and ln_mlp per layer (the new decoder architecture) and lm_head.weight, which the model
  // ties to the embeddings (transformers of the time counted the tied copy in total_size).
  const ModelSpec m = read_hf_config(k_dir + "falcon-40b_RW.json");
  CHECK(m.arch->kv_heads == 8);
  CHECK(m.parameters + m.arch->vocab * m.arch->hidden == 83671941120ull / 2);
  // KV cache: 2 x 8 kv heads x 64 x 2 B = 2,048 B per token and layer.
  CHECK(kv_bytes(m, 1) == 60ull * 2048);
}

TEST_CASE("Qwen2-57B-A14B: the real config, 57B total and 14B active", "[hf_config][families][moe]") {
  // Model card and Qwen2 technical report: 57B total, 14B activated. By hand from Qwen2MoE's modules:
  // embeddings and lm_head 2 x 151,936 x 3,584 = 1,089,077,248; per layer attention 29,364,736
  // (q and o 3,584^2, k and v 3,584 x 512, biases 3,584 + 2 x 512), router 3,584 x 64 = 229,376,
  // experts 64 x 3 x 3,584 x 2,560 = 1,761,607,680, shared expert 3 x 3,584 x 20,480 = 220,200,960,
  // shared_expert_gate 3,584, two RMSNorms 7,168: 2,011,413,504 x 28 layers; final norm 3,584.
  const ModelSpec m = read_hf_config(k_dir + "Qwen2-57B-A14B.json");
  CHECK(m.parameters == 1089077248ull + 28ull * 2011413504 + 3584);
  CHECK(std::round(static_cast<double>(m.parameters) / 1e9) == 57);
  CHECK(std::round(static_cast<double>(m.active_parameters) / 1e9) == 14);
}

TEST_CASE("OLMoE-1B-7B-0125-Instruct: the real config, 6.9B total and 1.3B active",
          "[hf_config][families][moe]") {
  // OLMoE paper and model card: 6.9B total (Hub: 6.92B), 1.3B active. By hand from OlmoeForCausalLM:
  // embeddings and lm_head 2 x 50,304 x 2,048 = 206,045,184; per layer q, k, v, o 4 x 2,048^2 =
  // 16,777,216, q_norm and k_norm over 2,048 each = 4,096, router 2,048 x 64 = 131,072, experts
  // 64 x 3 x 2,048 x 1,024 = 402,653,184, two RMSNorms 4,096: 419,569,664 x 16; final norm 2,048.
  const ModelSpec m = read_hf_config(k_dir + "OLMoE-1B-7B-0125-Instruct.json");
  CHECK(m.parameters == 206045184ull + 16ull * 419569664 + 2048);
  CHECK(std::round(static_cast<double>(m.parameters) / 1e7) / 100 == 6.92);
  CHECK(std::round(static_cast<double>(m.active_parameters) / 1e8) / 10 == 1.3);
}

TEST_CASE("Phi-3.5-MoE-instruct: 41,873,153,344 parameters, 6.6B active", "[hf_config][families][moe]") {
  // 41,873,153,344: the per-module sum of microsoft/Phi-3.5-MoE-instruct posted on r/LocalLLaMA
  // ("Interesting model differences between Phi-3.5-Mini and Phi-3.5-MoE",
  // https://reddit.com/r/LocalLLaMA/comments/1exn6wx/), quoted in a public GitHub digest of that
  // week's posts; the model card: 41.9B total, "6.6B active parameters when using 2 experts".
  // By hand from PhimoeForCausalLM: embeddings and lm_head 2 x 32,064 x 4,096 + lm_head bias 32,064;
  // per layer q, o 4,096^2 + 4,096, k, v 4,096 x 1,024 + 1,024 (attention_bias), router 4,096 x 16,
  // 16 experts x 3 x 4,096 x 6,400, two LayerNorms 4 x 4,096: 1,300,326,400 x 32; final LayerNorm 8,192.
  const ModelSpec m = read_hf_config(k_dir + "Phi-3.5-MoE-instruct.json");
  CHECK(m.parameters == 41873153344ull);
  CHECK(m.parameters == 2ull * 32064 * 4096 + 32064 + 32ull * 1300326400 + 8192);
  // Active: 2 of the 16 experts: per layer 1,300,326,400 - 14 x 3 x 4,096 x 6,400 = 199,321,600.
  CHECK(m.active_parameters == 2ull * 32064 * 4096 + 32064 + 32ull * 199321600 + 8192);
  CHECK(std::round(static_cast<double>(m.active_parameters) / 1e8) / 10 == 6.6);
}

TEST_CASE("starcoder2-3b: the model card's memory footprints, to their 0.01 MB", "[hf_config][families]") {
  // bigcode/starcoder2-3b's model card prints model.get_memory_footprint(): 12624.81 MB in full
  // precision, 6312.41 MB in bfloat16 (https://huggingface.co/bigcode/starcoder2-3b, "Running the
  // model"). That footprint is the parameters plus the buffers of transformers 4.39's
  // Starcoder2RotaryEmbedding, one per layer: cos_cached and sin_cached, max_position_embeddings
  // 16,384 x head_dim 128 each, in the model's dtype, and inv_freq, 64 fp32 numbers.
  // The config: the architecture fields of starcoder2-3b as public tests quote them (SOURCES.md).
  const ModelSpec m = read_hf_config(k_dir + "starcoder2-3b.json");
  const uint64_t buffers = 30ull * 2 * 16384 * 128;
  const double fp32_mb = static_cast<double>(m.parameters * 4 + buffers * 4 + 30ull * 64 * 4) / 1e6;
  const double bf16_mb = static_cast<double>(m.parameters * 2 + buffers * 2 + 30ull * 64 * 4) / 1e6;
  CHECK(std::llround(fp32_mb * 100) == 1262481);
  CHECK(std::llround(bf16_mb * 100) == 631241);
  // By hand: embeddings 49,152 x 3,072 (tied); per layer q, o 3,072^2 + 3,072, k, v 3,072 x 256 + 256,
  // c_fc 3,072 x 12,288 + 12,288, c_proj 12,288 x 3,072 + 3,072, two LayerNorms 4 x 3,072 =
  // 95,979,008 x 30; final LayerNorm 6,144.
  CHECK(m.parameters == 49152ull * 3072 + 30ull * 95979008 + 6144);
  // KV cache: 2 x 2 kv heads x 128 x 2 B = 1,024 B per token and layer; every layer slides over
  // sliding_window 4,096 tokens.
  CHECK(kv_bytes(m, 8192) == 30ull * 4096 * 1024);
}

TEST_CASE("c4ai-command-r-v01: 35B to its published rounding, exact by hand", "[hf_config][families]") {
  // The model card (CohereForAI/c4ai-command-r-v01): "Model Size: 35 billion parameters"; no exact
  // published integer was found, so the exact figure is worked out by hand from CohereForCausalLM:
  // tied embeddings 256,000 x 8,192; per layer q, k, v, o 4 x 8,192^2 (64 kv heads: no GQA),
  // gate, up, down 3 x 8,192 x 22,528, one LayerNorm without bias 8,192 = 822,091,776 x 40; final
  // norm 8,192.
  const ModelSpec m = read_hf_config(k_dir + "c4ai-command-r-v01.json");
  CHECK(m.parameters == 256000ull * 8192 + 40ull * 822091776 + 8192);
  CHECK(std::round(static_cast<double>(m.parameters) / 1e9) == 35);
  // KV cache: 2 x 64 kv heads x 128 x 2 B = 32,768 B per token and layer, 40 layers.
  CHECK(kv_bytes(m, 1000) == 40ull * 1000 * 32768);
}

TEST_CASE("presets phi-3.5-moe and command-r-v01 hold the published counts", "[presets][families]") {
  // The sources of the two tests above: 41,873,153,344 (6.6B active) and the card's 35B.
  const Presets& p = builtin_presets();
  const ModelSpec phi = find_model(p, "--model", "phi-3.5-moe").model;
  CHECK(phi.parameters == 41873153344ull);
  CHECK(phi.parameters == read_hf_config(k_dir + "Phi-3.5-MoE-instruct.json").parameters);
  CHECK(std::round(static_cast<double>(phi.active_parameters) / 1e8) / 10 == 6.6);
  const ModelSpec cr = find_model(p, "--model", "command-r-v01").model;
  CHECK(cr.parameters == read_hf_config(k_dir + "c4ai-command-r-v01.json").parameters);
  CHECK(std::round(static_cast<double>(cr.parameters) / 1e9) == 35);
}
