// Issue 27 ("one answer, whatever the door"): llama.cpp file types on fine-grained MoE and MLA
// models count each tensor at its real shape, and gguf-fit's KV cache follows llama.cpp's window
// and latent caches. Every expected number is element counts x bytes per block written out here:
// Q4_K 144 bytes per 256 (4.5 bits per weight), Q6_K 210 per 256 (6.5625), Q5_0 22 per 32,
// Q8_0 34 per 32, F32 4 bytes (ggml-common.h block sizes).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include <memplan/presets.hpp>
#include "core/formats/llama_quant.hpp"
#include "core/memory/kv_cache.hpp"
#include "core/models/gguf.hpp"
#include "core/models/gguf_mix.hpp"
#include "core/models/hf_config.hpp"
#include "core/models/parameter_count.hpp"
#include "core/serving/llamacpp.hpp"

using namespace memplan;

namespace {

const std::string k_moe_configs = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/";
constexpr double k_mib_d = 1024.0 * 1024.0;

uint64_t q4k(uint64_t n) { return n / 256 * 144; }
uint64_t q6k(uint64_t n) { return n / 256 * 210; }
uint64_t q5_0(uint64_t n) { return n / 32 * 22; }
// llama.cpp's use_more_bits (llama-quant.cpp): the layers Q4_K_M gives Q6_K for attn_v / ffn_down.
bool more_bits(uint64_t i, uint64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

uint64_t elements(const GgufFile& g) {
  uint64_t n = 0;
  for (const GgufTensor& t : g.tensors) n += t.elements;
  return n;
}

const GgufTensor& tensor(const GgufFile& g, const std::string& name) {
  for (const GgufTensor& t : g.tensors)
    if (t.name == name) return t;
  FAIL("no tensor " << name);
  return g.tensors.front();
}

std::string type_of(const GgufFile& g, const std::string& name) {
  return find_gguf_type(tensor(g, name).type)->name;
}

// Qwen3-30B-A3B (tests/data/hf_configs/Qwen3-30B-A3B.json): 48 layers, hidden 2048, 32 heads of
// 128, 4 KV heads, 128 experts of 768, vocabulary 151936, untied. One layer in Q4_K_M: two norms
// and the q/k norms and the router (F32), q, k, o and the experts' gate and up in Q4_K, v and the
// experts' down in Q6_K on use_more_bits layers, else Q4_K.
uint64_t qwen3_moe_layer_bytes(uint64_t i) {
  const uint64_t h = 2048, q = 32 * 128, kv = 4 * 128, e = 128, w = 768;
  const bool more = more_bits(i, 48);
  uint64_t b = (2 * h + 2 * 128 + h * e) * 4;  // attn_norm, ffn_norm, attn_q_norm, attn_k_norm, ffn_gate_inp
  b += q4k(h * q) + q4k(h * kv) + (more ? q6k(h * kv) : q4k(h * kv)) + q4k(q * h);
  b += 2 * q4k(h * w * e) + (more ? q6k(w * h * e) : q4k(w * h * e));
  return b;
}

}  // namespace

TEST_CASE("issue 27: q4_k_m on Qwen3-30B-A3B counts 128 experts 768 wide, not 6,144", "[llamacpp][moe]") {
  const ModelSpec m = read_hf_config(k_moe_configs + "Qwen3-30B-A3B.json");
  REQUIRE(m.arch);
  const GgufFile g = gguf_of_arch(*m.arch, *find_llama_ftype("q4_k_m"));
  // 30,532,122,624: llama.cpp's general.parameter_count for the model (hf_configs/SOURCES.md).
  CHECK(elements(g) == 30532122624ull);
  CHECK(elements(g) == m.parameters);
  uint64_t layers = 0;
  for (uint64_t i = 0; i < 48; ++i) layers += qwen3_moe_layer_bytes(i);
  const uint64_t embd = q4k(2048ull * 151936), output = q6k(2048ull * 151936) + 2048 * 4;
  CHECK(g.data_end == layers + embd + output);
  CHECK(g.data_end == 18550716416ull);  // 17.28 GiB; the Hub's Q4_K_M files are 18.6 GB with the header
  CHECK(type_of(g, "blk.0.ffn_down_exps.weight") == "Q6_K");
  CHECK(type_of(g, "blk.6.ffn_down_exps.weight") == "Q4_K");
  CHECK(tensor(g, "blk.0.ffn_up_exps.weight").dims == std::vector<uint64_t>{2048, 768, 128});

  // llama.cpp#13729 (Qwen3-30B-A3B Q4_K_M, build b5466, -ngl 30 of 49): "CUDA0 model buffer size
  // = 10750.86 MiB" (layers 18..47) and "CPU_Mapped model buffer size = 6940.48 MiB" (token_embd,
  // layers 0..17, output).
  uint64_t gpu = 0, cpu = embd + output;
  for (uint64_t i = 0; i < 48; ++i) (i >= 18 ? gpu : cpu) += qwen3_moe_layer_bytes(i);
  CHECK(std::abs(static_cast<double>(gpu) / k_mib_d - 10750.86) < 0.005);
  CHECK(std::abs(static_cast<double>(cpu) / k_mib_d - 6940.48) < 0.005);
  LlamaCppRequest r;
  r.arch = *m.arch;
  r.weights = g;
  r.gpu_bytes = {24ull << 30};
  r.n_gpu_layers = 30;
  r.output_first = false;  // b5466 predates llama.cpp PR 18148: the last 30 repeating layers
  const LlamaCppPlan p = plan_llamacpp(r);
  CHECK(p.gpus[0].model == gpu);
  CHECK(p.host.model == cpu);
  // Builds from PR 18148 on give -ngl 30 the output layer and layers 19..47.
  r.output_first = true;
  const LlamaCppPlan now = plan_llamacpp(r);
  CHECK(now.gpus[0].output);
  CHECK(now.gpus[0].model == gpu - qwen3_moe_layer_bytes(18) + output);
  CHECK(now.host.model == cpu + qwen3_moe_layer_bytes(18) - output);
}

TEST_CASE("issue 27: q8_0 and q6_k on Qwen3-30B-A3B match bartowski's published files", "[llamacpp][moe]") {
  // bartowski/Qwen_Qwen3-30B-A3B-GGUF (llama.cpp b5200; the table mirrored at
  // model.aibase.com/zh/models/details/1924737621108723712): Q8_0 32.48 GB, Q6_K 25.10 GB, each
  // the tensor data plus a header of a few MB (the 151,936-token vocabulary and its merges).
  const ModelSpec m = read_hf_config(k_moe_configs + "Qwen3-30B-A3B.json");
  REQUIRE(m.arch);
  const uint64_t routers = 48ull * 2048 * 128;                         // ffn_gate_inp, F32
  const uint64_t vectors = 48ull * (2 * 2048 + 2 * 128) + 2048;        // norms, F32
  const uint64_t matrices = 30532122624ull - routers - vectors;        // everything else
  const uint64_t q8 = matrices / 32 * 34 + (routers + vectors) * 4;    // Q8_0 everywhere, output too
  const uint64_t q6 = matrices / 256 * 210 + (routers + vectors) * 4;  // Q6_K everywhere
  const GgufFile g8 = gguf_of_arch(*m.arch, *find_llama_ftype("q8_0"));
  const GgufFile g6 = gguf_of_arch(*m.arch, *find_llama_ftype("q6_k"));
  CHECK(g8.data_end == q8);
  CHECK(g6.data_end == q6);
  CHECK(std::abs(static_cast<double>(g8.data_end) / 1e9 - 32.48) < 0.02);
  CHECK(std::abs(static_cast<double>(g6.data_end) / 1e9 - 25.10) < 0.02);
}

TEST_CASE("issue 27: q4_k_m on DeepSeek-V3 counts MLA, the shared expert and 3 dense layers",
          "[llamacpp][moe]") {
  // DeepSeek-R1's config (DeepSeek-V3's architecture): 61 layers, hidden 7168, 128 heads, q_lora
  // 1536, kv_lora 512, qk_nope 128, qk_rope 64, v 128; layers 0-2 dense (18432), then 256 routed
  // experts and 1 shared expert of 2048 with a router bias; vocabulary 129280, untied.
  const ModelSpec m = read_hf_config(k_moe_configs + "DeepSeek-R1.json");
  REQUIRE(m.arch);
  const GgufFile g = gguf_of_arch(*m.arch, *find_llama_ftype("q4_k_m"));
  CHECK(elements(g) == 671026419200ull);  // the main model without its MTP module (SOURCES.md)
  CHECK(elements(g) == m.parameters);
  const uint64_t h = 7168, heads = 128, e = 256, w = 2048;
  uint64_t expected = 0;
  for (uint64_t i = 0; i < 61; ++i) {
    const bool more = more_bits(i, 61);
    uint64_t b = (2 * h + 1536 + 512) * 4;  // attn_norm, ffn_norm, attn_q_a_norm, attn_kv_a_norm
    b += q4k(h * 1536) + q4k(1536 * heads * 192) + q4k(h * 576);  // attn_q_a, attn_q_b, attn_kv_a_mqa
    b += q5_0(128 * 512 * heads);  // attn_k_b: rows of 128 do not fill Q4_K's 256, Q5_0 instead
    b += q4k(512 * 128 * heads) + q4k(heads * 128 * h);  // attn_v_b, attn_output
    if (i < 3) {
      b += 2 * q4k(h * 18432) + (more ? q6k(18432 * h) : q4k(18432 * h));
    } else {
      b += (h * e + e) * 4;  // ffn_gate_inp, exp_probs_b
      b += 2 * q4k(h * w * e) + (more ? q6k(w * h * e) : q4k(w * h * e));
      b += 2 * q4k(h * w) + (more ? q6k(w * h) : q4k(w * h));  // the shared expert
    }
    expected += b;
  }
  expected += q4k(h * 129280) + q6k(h * 129280) + h * 4;  // token_embd, output, output_norm
  CHECK(g.data_end == expected);
  CHECK(g.data_end == 404488847360ull);  // 376.7 GiB (3511.6 GiB before: every expert 18,432 wide)
  CHECK(type_of(g, "blk.0.attn_k_b.weight") == "Q5_0");
  CHECK(type_of(g, "blk.3.ffn_gate_inp.weight") == "F32");
}

TEST_CASE("issue 27: a GGUF's tensors add up to the parameter count of every decoder config",
          "[llamacpp][moe]") {
  // The configs' own counts (hf_config_moe.cpp and the dense families), which the MoE configs'
  // published counts pin (test_hf_config_moe.cpp): the converter's tensors hold exactly those.
  for (const char* name :
       {"Qwen3-30B-A3B", "DeepSeek-R1", "DeepSeek-V2.5", "Qwen1.5-MoE-A2.7B", "Qwen2-57B-A14B",
        "OLMoE-1B-7B-0125-Instruct", "Phi-3.5-MoE-instruct", "gpt-oss-20b", "gpt-oss-120b",
        "Mixtral-8x7B-v0.1", "Llama-3.1-8B-Instruct", "Qwen2.5-7B", "Qwen3-4B", "gemma-2-2b", "gemma-3-1b-it",
        "Phi-3-mini-4k-instruct", "OLMo-2-1124-7B", "starcoder2-3b"}) {
    INFO(name);
    const ModelSpec m = read_hf_config(k_moe_configs + name + ".json");
    REQUIRE(m.arch);
    CHECK(elements(gguf_of_arch(*m.arch, *find_llama_ftype("q8_0"))) == m.parameters);
    CHECK(count_parameters(*m.arch).total == m.parameters);  // the one counter, from the bare architecture
  }
  // Every decoder preset: the tensors are the one counter's shapes. (Where a preset's architecture
  // leaves out its biases or position table, gpt2 and phi-2, that count is below the published one.)
  for (const ModelPreset& p : builtin_presets().models) {
    if (!p.model.arch || !p.model.arch->causal || p.model.arch->encoder_decoder) continue;
    INFO(p.model.id);
    CHECK(elements(gguf_of_arch(*p.model.arch, *find_llama_ftype("q8_0"))) ==
          count_parameters(*p.model.arch).total);
  }
  for (const char* id : {"llama-3-8b", "mixtral-8x7b", "qwen3-8b", "gemma-3-1b", "phi-3.5-moe", "glm-4-9b"}) {
    INFO(id);
    const ModelSpec& m = find_model(builtin_presets(), "model", id).model;
    CHECK(elements(gguf_of_arch(*m.arch, *find_llama_ftype("q8_0"))) == m.parameters);  // published
  }
}

TEST_CASE("issue 27: gguf-fit keeps window layers in llama.cpp's smaller SWA cache", "[llamacpp][kv]") {
  // llama-kv-cache-iswa.cpp: the window layers get GGML_PAD(min(n_ctx, n_swa + n_ubatch), 256)
  // cells, the others n_ctx; llama_hparams::set_swa_pattern: all but the last layer of each run.
  SECTION("Gemma 3 1B: 22 of 26 layers, window 512, one K+V row 2 x 256 f16 = 1024 bytes") {
    LlamaCppRequest r;
    const ModelSpec m = read_hf_config(k_moe_configs + "gemma-3-1b-it.json");
    REQUIRE(m.arch);
    r.arch = *m.arch;
    r.weights = gguf_of_arch(r.arch, *find_llama_ftype("q4_k_m"));
    r.gpu_bytes = {80ull << 30};
    r.n_ctx = 32768;
    const LlamaCppPlan p = plan_llamacpp(r);
    CHECK(p.n_swa_cells == 1024);  // pad(min(32768, 512 + 512), 256)
    CHECK(p.kv_swa_layer_bytes == 1024ull * 1024);
    CHECK(p.kv_layer_bytes == 32768ull * 1024);
    CHECK_FALSE(p.swa_layers[5]);
    CHECK(p.swa_layers[4]);
    CHECK(p.gpus[0].kv == 4 * 32768ull * 1024 + 22 * 1024ull * 1024);  // 150 MiB, not 832
    r.swa_full = true;
    CHECK(plan_llamacpp(r).gpus[0].kv == 26 * 32768ull * 1024);
  }
  SECTION("gpt-oss-20b: 12 of 24 layers, window 128, K+V row 2 x 8 x 64 f16 = 2048 bytes") {
    LlamaCppRequest r;
    const ModelSpec m = read_hf_config(k_moe_configs + "gpt-oss-20b.json");
    REQUIRE(m.arch);
    r.arch = *m.arch;
    r.weights = gguf_of_arch(r.arch, *find_llama_ftype("q8_0"));
    r.gpu_bytes = {80ull << 30};
    r.n_ctx = 32768;
    const LlamaCppPlan p = plan_llamacpp(r);
    CHECK(p.n_swa_cells == 768);  // pad(min(32768, 128 + 512), 256)
    CHECK(p.gpus[0].kv == 12 * 32768ull * 2048 + 12 * 768ull * 2048);
  }
  SECTION("Mistral 7B v0.1: every layer windowed, which llama.cpp's llama model does not implement") {
    LlamaCppRequest r;
    r.arch = *find_model(builtin_presets(), "model", "mistral-7b").model.arch;
    r.weights = gguf_of_arch(r.arch, *find_llama_ftype("q4_k_m"));
    r.gpu_bytes = {80ull << 30};
    r.n_ctx = 32768;
    const LlamaCppPlan p = plan_llamacpp(r);
    CHECK(p.n_swa_cells == 0);
    CHECK(p.gpus[0].kv == 32 * 32768ull * 2048 * 2);  // K and V rows of 8 x 128 f16
  }
}

TEST_CASE("issue 27: gguf-fit caches DeepSeek's MLA latent as one 576-wide K row, no V", "[llamacpp][kv]") {
  // llama.cpp since PR 19067 (src/llama-kv-cache.cpp, no V tensor when hparams.is_mla()): K rows
  // of kv_lora_rank + qk_rope_head_dim = 512 + 64; the same row estimate and serve count.
  const ModelSpec m = read_hf_config(k_moe_configs + "DeepSeek-R1.json");
  REQUIRE(m.arch);
  LlamaCppRequest r;
  r.arch = *m.arch;
  r.weights = gguf_of_arch(r.arch, *find_llama_ftype("q4_k_m"));
  r.gpu_bytes = {1024ull << 30};
  r.n_ctx = 32768;
  r.n_gpu_layers = 62;
  const LlamaCppPlan p = plan_llamacpp(r);
  CHECK(p.kv_layer_bytes == 32768ull * 576 * 2);
  CHECK(p.gpus[0].kv == 61 * 32768ull * 576 * 2);  // 2,302,672,896 bytes; 183 GiB before
  InferenceOptions o;
  o.seq = 32768;
  CHECK(inference_memory(r.arch, o).bytes == p.gpus[0].kv);
}

TEST_CASE("issue 27: a GGUF's own keys give the same KV rows as its config", "[llamacpp][kv][gguf]") {
  auto spec = [](nlohmann::json meta) {
    GgufFile g;
    g.file = "model.gguf";
    g.metadata = std::move(meta);
    GgufTensor t;
    t.name = "token_embd.weight";
    t.dims = {7168, 129280};
    t.elements = 7168ull * 129280;
    t.type = 1;  // F16
    t.bytes = t.elements * 2;
    g.tensors.push_back(t);
    return model_spec_of(g);
  };
  const nlohmann::json base = {{"general.architecture", "deepseek2"}, {"deepseek2.block_count", 61},
                               {"deepseek2.embedding_length", 7168},  {"deepseek2.attention.head_count", 128},
                               {"deepseek2.vocab_size", 129280},      {"deepseek2.rope.dimension_count", 64}};
  SECTION("the MLA conversion: one K row of key_length 576 = 512 + 64, no V (llama.cpp PR 19067)") {
    nlohmann::json m = base;
    m["deepseek2.attention.head_count_kv"] = 1;
    m["deepseek2.attention.key_length"] = 576;
    m["deepseek2.attention.value_length"] = 512;
    m["deepseek2.attention.kv_lora_rank"] = 512;
    m["deepseek2.attention.key_length_mla"] = 192;
    m["deepseek2.attention.value_length_mla"] = 128;
    const ModelSpec s = spec(m);
    REQUIRE(s.arch);
    const KvRowElements row = kv_row_elements(*s.arch);
    CHECK(row.k == 576);
    CHECK(row.v == 0);
    const ModelSpec c = read_hf_config(k_moe_configs + "DeepSeek-R1.json");
    CHECK(kv_row_elements(*c.arch).k == row.k);  // the config door's row
  }
  SECTION("an older conversion: 128 KV heads, K 192 and V 128 per head, V not at K's width") {
    nlohmann::json m = base;
    m["deepseek2.attention.head_count_kv"] = 128;
    m["deepseek2.attention.key_length"] = 192;
    m["deepseek2.attention.value_length"] = 128;
    const ModelSpec s = spec(m);
    REQUIRE(s.arch);
    const KvRowElements row = kv_row_elements(*s.arch);
    CHECK(row.k == 128 * 192);
    CHECK(row.v == 128 * 128);  // 128 x 192 before: +20% on K + V
  }
  SECTION("gemma3's sliding_window: 22 of 26 layers, set_swa_pattern(6)") {
    const ModelSpec s = spec({{"general.architecture", "gemma3"},
                              {"gemma3.block_count", 26},
                              {"gemma3.embedding_length", 1152},
                              {"gemma3.attention.head_count", 4},
                              {"gemma3.attention.head_count_kv", 1},
                              {"gemma3.attention.key_length", 256},
                              {"gemma3.attention.sliding_window", 512}});
    REQUIRE(s.arch);
    CHECK(s.arch->attention_window == 512);
    CHECK(s.arch->window_layers == 22);
    CHECK(llamacpp_swa_layers(*s.arch).size() == 26);
  }
}
