// llama.cpp file types and offload: byte counts against published GGUF sizes, llama.cpp logs and
// llama-quantize's tensor-type counts (sources cited at each number).
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include <memplan/error.hpp>
#include "core/formats/llama_quant.hpp"
#include "core/models/gguf_mix.hpp"
#include "core/serving/llamacpp.hpp"
#include "core/serving/llamacpp_failure.hpp"
#include "core/serving/llamacpp_log.hpp"

using namespace memplan;

namespace {

constexpr double k_mib_llama = 1024.0 * 1024.0;

double d(uint64_t n) { return static_cast<double>(n); }

TransformerArch llama(uint64_t layers, uint64_t hidden, uint64_t heads, uint64_t kv, uint64_t ff,
                      uint64_t vocab, bool tied = false, const char* type = "llama") {
  TransformerArch a;
  a.model_type = type;
  a.layers = layers;
  a.hidden = hidden;
  a.heads = heads;
  a.kv_heads = kv;
  a.intermediate = ff;
  a.vocab = vocab;
  a.gated_mlp = true;
  a.norm = "rmsnorm";  // LLaMA's (and Qwen2's, Mixtral's) RMSNorm: a weight per norm, no bias
  a.tied_embeddings = tied;
  return a;
}

// Meta-Llama-3-8B / 3.1-8B config.json: 32 layers, 4096, 32 heads, 8 KV heads, 14336, 128256.
TransformerArch llama3_8b() { return llama(32, 4096, 32, 8, 14336, 128256); }

// Llama-3.1-8B Q4_K_M on GPUs of these sizes (llama.cpp's defaults otherwise).
LlamaCppRequest llama3_8b_q4(std::vector<uint64_t> gpu_bytes) {
  LlamaCppRequest r;
  r.arch = llama3_8b();
  r.weights = gguf_of_arch(r.arch, *find_llama_ftype("q4_k_m"));
  r.gpu_bytes = std::move(gpu_bytes);
  return r;
}

uint64_t count_type(const GgufFile& g, const char* type) {
  uint64_t n = 0;
  for (const GgufTensor& t : g.tensors) n += std::string(find_gguf_type(t.type)->name) == type;
  return n;
}

double mib_of(const GgufFile& g, bool (*pick)(const std::string&)) {
  uint64_t b = 0;
  for (const GgufTensor& t : g.tensors)
    if (pick(t.name)) b += t.bytes;
  return d(b) / k_mib_llama;
}

}  // namespace

TEST_CASE("llama.cpp file types by name", "[llamacpp]") {
  REQUIRE(find_llama_ftype("Q4_K_M") != nullptr);
  CHECK(find_llama_ftype("q4_k_m")->id == 15);  // LLAMA_FTYPE_MOSTLY_Q4_K_M in include/llama.h
  CHECK(find_llama_ftype("q8_0")->id == 7);
  CHECK(find_llama_ftype("iq4_xs")->id == 30);
  CHECK(find_llama_ftype("q4_k_x") == nullptr);
  CHECK_THROWS_WITH(find_quantize_format("--quantize", "q4_k_x"), Catch::Contains("did you mean"));
  CHECK(find_quantize_format("--quantize", "gptq-4bit").cost == ElementCost{133, 256});
}

TEST_CASE("q4_k_m tensor types match llama-quantize's counts in published logs", "[llamacpp]") {
  // Llama-3.1-8B Q4_K_M (abetlen/llama-cpp-python#1693): q4_K 193 tensors, q6_K 33 (and 66 f32,
  // one of them rope_freqs, which memplan does not list).
  const GgufFile g = gguf_of_arch(llama3_8b(), *find_llama_ftype("q4_k_m"));
  CHECK(count_type(g, "Q4_K") == 193);
  CHECK(count_type(g, "Q6_K") == 33);
  CHECK(count_type(g, "F32") == 65);
  // Mistral-Large-2407 Q4_K_M (oobabooga/textgen#6398): 88 layers, 12288, 96 heads, 8 KV heads,
  // 28672, vocabulary 32768: q4_K 529 tensors, q6_K 89.
  const GgufFile m = gguf_of_arch(llama(88, 12288, 96, 8, 28672, 32768), *find_llama_ftype("q4_k_m"));
  CHECK(count_type(m, "Q4_K") == 529);
  CHECK(count_type(m, "Q6_K") == 89);
}

TEST_CASE("q4_k_m bytes match published GGUF sizes", "[llamacpp]") {
  const LlamaFtype& q4km = *find_llama_ftype("q4_k_m");
  // TinyLlama-1.1B (config: 22 layers, 2048, 32 heads, 4 KV heads, 5632, 32000): llama-bench
  // reports "llama 1B Q4_K - Medium 636.18 MiB" (geerlingguy/ai-benchmarks#54).
  const GgufFile tiny = gguf_of_arch(llama(22, 2048, 32, 4, 5632, 32000), q4km);
  CHECK(std::abs(d(tiny.data_end) / k_mib_llama - 636.18) < 0.005);
  // Llama-3.2-3B (28 layers, 3072, 24 heads, 8 KV heads, 8192, 128256, tied embeddings):
  // llama-bench "1.87 GiB"; the file is 2,019,377,696 bytes (geerlingguy/ai-benchmarks#53), the
  // rest being the header (the 128256-token vocabulary and its merges).
  const GgufFile l3b = gguf_of_arch(llama(28, 3072, 24, 8, 8192, 128256, true), q4km);
  CHECK(std::abs(d(l3b.data_end) / (k_mib_llama * 1024) - 1.87) < 0.005);
  CHECK(l3b.data_end < 2019377696ull);
  CHECK(2019377696ull - l3b.data_end < 10'000'000ull);
  // DeepSeek-R1-Distill-Qwen-7B (Qwen2: 28 layers, 3584, 28 heads, 4 KV heads, 18944, 152064):
  // llama.cpp logs CUDA0 4168.09 MiB (layers + output) and CPU_Mapped 292.36 MiB (token_embd)
  // (canonical/inference-snaps#107).
  TransformerArch q = llama(28, 3584, 28, 4, 18944, 152064, false, "qwen2");
  const GgufFile r1 = gguf_of_arch(q, q4km);
  const double embd = mib_of(r1, [](const std::string& n) { return n == "token_embd.weight"; });
  const double rest = mib_of(r1, [](const std::string& n) { return n != "token_embd.weight"; });
  CHECK(std::abs(embd - 292.36) < 0.005);
  CHECK(std::abs(rest - 4168.09) < 0.005);
}

TEST_CASE("llama.cpp rule details: 70B attn_v, tied output, ragged rows", "[llamacpp]") {
  const LlamaFtype& q4km = *find_llama_ftype("q4_k_m");
  QuantModelFacts m;
  m.layers = 80;
  m.gqa = 8;
  m.size_70b = true;
  // layer 4 of 80 is not one of use_more_bits' layers: Q4_K, lifted to Q5_K for the 70B.
  CHECK(llama_tensor_type(q4km, m, TensorRole::attn_v, 20) == "Q5_K");
  CHECK(llama_tensor_type(q4km, m, TensorRole::attn_v, 0) == "Q6_K");
  CHECK(llama_tensor_type(*find_llama_ftype("q8_0"), m, TensorRole::output, 0) == "Q8_0");
  CHECK(llama_tensor_type(*find_llama_ftype("q4_0"), m, TensorRole::output, 0) == "Q6_K");
  CHECK(llama_fallback_type("Q4_K") == "Q5_0");
}

TEST_CASE("KV cache per layer for the cache types", "[llamacpp]") {
  LlamaCppRequest r = llama3_8b_q4({80ull << 30});
  r.n_ctx = 8192;
  const LlamaCppPlan f16 = plan_llamacpp(r);
  CHECK(f16.kv_layer_bytes == 8192ull * 1024 * 2 * 2);  // K and V rows of 1024 f16 per cell
  r.cache_k = r.cache_v = "Q8_0";
  r.flash_attn = true;
  CHECK(plan_llamacpp(r).kv_layer_bytes == 8192ull * 1024 / 32 * 34 * 2);  // 34 bytes per 32
  r.cache_k = r.cache_v = "Q4_0";
  CHECK(plan_llamacpp(r).kv_layer_bytes == 8192ull * 1024 / 32 * 18 * 2);
  r.n_ctx = 8000;  // padded to 256 cells
  CHECK(plan_llamacpp(r).n_ctx_cells == 8192);
}

TEST_CASE("the largest -ngl fits and one more layer does not", "[llamacpp]") {
  // Llama-3.1-8B Q4_K_M at its full 131072 context on a 12 GiB card (llama.cpp#9517's setting):
  // the 16 GiB f16 KV cache cannot all be on the GPU.
  LlamaCppRequest r = llama3_8b_q4({12ull << 30});
  r.n_ctx = 131072;
  r.flash_attn = true;
  r.reserve_bytes = 512ull << 20;
  const std::optional<uint64_t> ngl = largest_ngl(r);
  REQUIRE(ngl.has_value());
  CHECK(*ngl < 33);
  r.n_gpu_layers = *ngl;
  CHECK(plan_llamacpp(r).fits);
  r.n_gpu_layers = *ngl + 1;
  CHECK_FALSE(plan_llamacpp(r).fits);
  // The layers not on the GPU keep their weights and KV in host memory.
  r.n_gpu_layers = *ngl;
  const LlamaCppPlan p = plan_llamacpp(r);
  CHECK(p.host.layers + p.gpus[0].layers == 32);
  CHECK(p.host.kv == p.host.layers * p.kv_layer_bytes);
}

TEST_CASE("layers split over two GPUs as llama.cpp's tensor split does", "[llamacpp]") {
  LlamaCppRequest r = llama3_8b_q4({24ull << 30, 24ull << 30});
  r.n_gpu_layers = 33;
  const LlamaCppPlan even = plan_llamacpp(r);
  // layer il goes to the first GPU whose cumulative share exceeds il / 33: 0..16 and 17..32.
  CHECK(even.gpus[0].layers == 17);
  CHECK(even.gpus[1].layers == 15);
  CHECK(even.gpus[1].output);
  CHECK_FALSE(even.gpus[0].output);
  // Every layer and the output on two GPUs: pipeline parallelism, each split input kept 4 times on
  // its GPU: 3 more f32 masks of 4096 cells x 512 rows and 4 hidden states of 4096 x 512 f32.
  CHECK(even.pipeline_copies == 4);
  CHECK(even.gpus[0].compute == even.compute_attention + 3 * (4096ull * 512 * 4) + 4 * (4096ull * 512 * 4));
  // -ngl 32: layer 0 stays in host memory (the output layer goes first): no pipeline; GPU 0 runs
  // that layer's attention with its K and V copied in, GPU 1 the output stage.
  r.n_gpu_layers = 32;
  const LlamaCppPlan partial = plan_llamacpp(r);
  CHECK(partial.pipeline_copies == 1);
  CHECK(partial.host.layers == 1);
  CHECK(partial.gpus[0].compute == partial.compute_attention + 2 * 4096ull * 1024 * 2);
  // The attention stage, f32 scores 4096 x 512 x 32 heads, mask and two activations (280 MiB), over
  // the output stage's 128256 x 512 logits and normed state (258.5 MiB).
  CHECK(partial.gpus[1].compute == (4096ull * 512 * 32 * 4 + 4096ull * 512 * 4 + 2 * 4096ull * 512 * 4));
  r.n_gpu_layers = 33;
  r.tensor_split = {3, 1};
  const LlamaCppPlan uneven = plan_llamacpp(r);
  CHECK(uneven.gpus[0].layers == 25);  // il / 33 < 0.75: il <= 24
  CHECK(uneven.gpus[1].layers == 7);
}

TEST_CASE("n_cpu_moe keeps the first layers' experts in host memory", "[llamacpp]") {
  // Mixtral-8x7B: 32 layers, 4096, 32 heads, 8 KV heads, 14336 per expert, 8 experts, 32000.
  LlamaCppRequest r;
  r.arch = llama(32, 4096, 32, 8, 14336, 32000, false, "mixtral");
  r.arch.experts = 8;
  r.arch.experts_per_token = 2;
  r.weights = gguf_of_arch(r.arch, *find_llama_ftype("q4_k_m"));
  r.gpu_bytes = {80ull << 30};
  r.n_gpu_layers = 33;
  const LlamaCppPlan all = plan_llamacpp(r);
  r.n_cpu_moe = 4;
  const LlamaCppPlan some = plan_llamacpp(r);
  uint64_t experts = 0;
  for (const GgufTensor& t : r.weights.tensors)
    if (gguf_tensor_layer(t.name) >= 0 && gguf_tensor_layer(t.name) < 4 &&
        t.name.find("_exps.") != std::string::npos)
      experts += t.bytes;
  CHECK(experts > 0);
  CHECK(all.gpus[0].model - some.gpus[0].model == experts);
  CHECK(some.host.model - all.host.model == experts);
}

TEST_CASE("llama.cpp log lines are read", "[llamacpp]") {
  std::ifstream in(MEMPLAN_TEST_DATA_DIR "/llamacpp_logs/ollama_13552_phi4_q4_k_m.log");
  std::stringstream ss;
  ss << in.rdbuf();
  const LlamaCppLog log = parse_llamacpp_log(ss.str());
  CHECK(log.model_mib.at("CUDA0") == Approx(8354.71));
  CHECK(log.model_mib.at("CPU_Mapped") == Approx(275.62));
  CHECK(log.kv_mib.at("CUDA0") == Approx(800.0));
  CHECK(log.compute_mib.at("CUDA0") == Approx(353.01));
  CHECK(*log.kv_total_mib == Approx(800.0));
  CHECK(*log.n_ctx == 4096);
  CHECK(*log.n_ubatch == 512);
  CHECK_FALSE(*log.flash_attn);
  CHECK(log.cache_k == "f16");
  CHECK(*log.offloaded == 41);
}

TEST_CASE("op offload: the host's layers and output run on GPU 0 with their weights copied in",
          "[llamacpp]") {
  // Llama-3.1-8B Q4_K_M, -ngl 20 on one GPU: 12 layers and the output layer stay in host memory.
  // ggml_backend_sched gives their products to CUDA0 (32 tokens or more), copying each weight in.
  LlamaCppRequest r = llama3_8b_q4({24ull << 30});
  r.n_gpu_layers = 20;
  r.output_first = false;  // builds before llama.cpp PR 18148: -ngl 20 is the last 20 layers
  const LlamaCppPlan p = plan_llamacpp(r);
  REQUIRE_FALSE(p.gpus[0].output);
  // The output matrix of Q4_K_M is q6_K: 210 bytes per 256 weights, 128256 x 4096 of them.
  const uint64_t output_matrix = 128256ull * 4096 / 256 * 210;
  const uint64_t logits = 128256ull * 512 * 4, normed = 4096ull * 512 * 4;
  CHECK(p.compute_host_output == logits + normed + output_matrix);
  CHECK(p.gpus[0].compute == p.compute_host_output);
  // A host layer's attention reads its whole K and V (4096 cells x 1024 f16 each) copied in.
  CHECK(p.compute_host_attention == p.compute_attention + 2 * 4096ull * 1024 * 2);
  // -ngl 0 still uses GPU 0 for the products (llama.cpp keeps op offload on).
  r.n_gpu_layers = 0;
  CHECK(plan_llamacpp(r).gpus[0].compute == p.compute_host_output);
  // --no-op-offload, or micro-batches under 32 tokens: the host computes its own share.
  r.op_offload = false;
  CHECK(plan_llamacpp(r).gpus[0].compute == 0);
  r.op_offload = true;
  r.n_ubatch = 16;
  CHECK(plan_llamacpp(r).gpus[0].compute == 0);
  // From PR 18148 on -ngl 20 is the output layer and the last 19: no output matrix to copy, the
  // GPU's own output stage instead.
  r.n_ubatch = 512;
  r.n_gpu_layers = 20;
  r.output_first = true;
  const LlamaCppPlan now = plan_llamacpp(r);
  CHECK(now.gpus[0].output);
  CHECK(now.gpus[0].layers == 19);
  CHECK(now.compute_host_output == 0);
  // The host layer's attention stage, 280 MiB with 16 MiB of K and V, over the 258.5 MiB output.
  CHECK(now.gpus[0].compute ==
        (4096ull * 512 * 32 * 4 + 4096ull * 512 * 4 + 2 * 4096ull * 512 * 4) + 2 * 4096ull * 1024 * 2);
  // Every layer and the output on the GPU: nothing of the host's.
  r.n_gpu_layers = 33;
  const LlamaCppPlan full = plan_llamacpp(r);
  CHECK(full.compute_host_output == 0);
  CHECK(full.compute_host_attention == 0);
  CHECK(full.gpus[0].compute == (4096ull * 512 * 32 * 4 + 4096ull * 512 * 4 + 2 * 4096ull * 512 * 4));
}

TEST_CASE("n_cpu_moe: the largest host expert tensor is copied into GPU 0's compute buffer", "[llamacpp]") {
  // Qwen3-30B-A3B: 48 layers, 2048, 32 heads, 4 KV heads, 128 experts of 768, 8 per token.
  LlamaCppRequest r;
  r.arch = llama(48, 2048, 32, 4, 768, 151936, false, "qwen3moe");
  r.arch.head_dim = 128;
  r.arch.experts = 128;
  r.arch.experts_per_token = 8;
  r.weights = gguf_of_arch(r.arch, *find_llama_ftype("q4_k_m"));
  r.gpu_bytes = {24ull << 30};
  r.n_gpu_layers = 49;
  r.n_cpu_moe = 10;
  uint64_t largest = 0;
  for (const GgufTensor& t : r.weights.tensors)
    if (t.name.find("_exps.") != std::string::npos && gguf_tensor_layer(t.name) < 10)
      largest = std::max(largest, t.bytes);
  const LlamaCppPlan p = plan_llamacpp(r);
  // The expert tensor beside GPU 0's f32 mask (4096 cells x 512), the residual and the MLP's
  // peak: at the down product the gated [768, 8, 512] and the down output [2048, 8, 512], f32.
  const uint64_t mask = 4096ull * 512 * 4, residual = 2048ull * 512 * 4;
  CHECK(p.compute_host_weight == largest + mask + residual + (8ull * 768 + 8ull * 2048) * 512 * 4);
  CHECK(p.pipeline_copies == 1);
}

TEST_CASE("llama.cpp's start-up failure: the first allocation that does not fit, in its words",
          "[llamacpp]") {
  // Llama-3.1-8B Q4_K_M, every layer on a 12 GiB card with 512 MiB reserved.
  LlamaCppRequest r = llama3_8b_q4({12ull << 30});
  r.reserve_bytes = 512ull << 20;
  r.n_gpu_layers = 33;
  r.n_ctx = 16384;
  CHECK_FALSE(llamacpp_start_failure(r, plan_llamacpp(r)).has_value());  // fits
  // 64k cells: the f16 KV cache alone is 32 x 65536 x 2 x 1024 x 2 B = 8 GiB, past what the
  // weights leave; llama.cpp allocates it before the compute buffers.
  r.n_ctx = 65536;
  const LlamaCppPlan kv = plan_llamacpp(r);
  const auto f = llamacpp_start_failure(r, kv);
  REQUIRE(f.has_value());
  CHECK(f->stage == LlamaCppStage::kv);
  CHECK(f->bytes == 32ull * 65536 * 2 * 1024 * 2);
  CHECK(f->free == (12ull << 30) - (512ull << 20) - kv.gpus[0].model);
  REQUIRE(f->lines.size() == 3);
  CHECK(f->lines[0] ==
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0: cudaMalloc failed: "
        "out "
        "of memory");
  CHECK(f->lines[1] == "alloc_tensor_range: failed to allocate CUDA0 buffer of size 8589934592");
  CHECK(f->lines[2] ==
        "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache");
  // 44k: the cache fits and the scores of 45056 cells x 512 x 32 heads in f32 (2.75 GiB) do not.
  r.n_ctx = 45056;
  const auto c = llamacpp_start_failure(r, plan_llamacpp(r));
  REQUIRE(c.has_value());
  CHECK(c->stage == LlamaCppStage::compute);
  CHECK(c->lines.back() ==
        "llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers");
  // A model larger than the card fails while loading.
  r.gpu_bytes = {4ull << 30};
  const auto m = llamacpp_start_failure(r, plan_llamacpp(r));
  REQUIRE(m.has_value());
  CHECK(m->stage == LlamaCppStage::model);
  CHECK(m->lines.back() == "llama_model_load: error loading model: unable to allocate CUDA0 buffer");
}

TEST_CASE("pipeline parallelism that does not fit is reserved again with one copy", "[llamacpp]") {
  // Two GPUs, every layer offloaded: 4 copies of each split input. When they do not fit but one
  // would, llama-context.cpp retries without pipeline parallelism.
  LlamaCppRequest r = llama3_8b_q4({24ull << 30, 24ull << 30});
  r.n_gpu_layers = 33;
  r.n_ctx = 32768;
  r.tensor_split = {1, 1};  // the layers stay where they are when GPU 0 shrinks
  const LlamaCppPlan big = plan_llamacpp(r);
  REQUIRE(big.pipeline_copies == 4);
  const uint64_t extra = big.compute_pipeline_extra;
  // GPU 0 with room for everything but the pipeline's extra copies.
  const LlamaCppDevice& g0 = big.gpus[0];
  r.gpu_bytes[0] = g0.model + g0.kv + big.compute_attention + extra / 2;
  const LlamaCppPlan tight = plan_llamacpp(r);
  CHECK(tight.pipeline_retried);
  CHECK(tight.pipeline_copies == 1);
  CHECK(tight.fits);
  // Room for less than one copy's stage: no retry saves it, and llama.cpp fails in the compute stage.
  r.gpu_bytes[0] = g0.model + g0.kv + big.compute_attention / 2;
  const LlamaCppPlan none = plan_llamacpp(r);
  CHECK_FALSE(none.fits);
  CHECK(llamacpp_start_failure(r, none)->stage == LlamaCppStage::compute);
}
