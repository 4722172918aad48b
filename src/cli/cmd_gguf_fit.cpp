// memplan gguf-fit: llama.cpp / Ollama on these GPUs - the largest -ngl that fits, where the
// model, the KV cache and the compute buffers go, the flags; --check-log compares with a log.

#include <algorithm>
#include <memory>
#include <sstream>

#include <memplan/error.hpp>
#include "cli/plan_options.hpp"
#include "core/base/quantity_kinds.hpp"
#include "core/formats/llama_quant.hpp"
#include "core/models/gguf.hpp"
#include "core/models/gguf_mix.hpp"

#include "cli/gguf_fit_common.hpp"

namespace memplan::cli {
namespace {

using namespace gguf_fit;

struct State {
  RawPlan plan;
  RawOutputOptions output;
  std::string ctx = "4096", ubatch = "512", cache_k = "f16", cache_v = "f16", ngl, split, cpu_moe = "0";
  std::string mmproj, check_log, ngl_order = "output-first";
  std::string ollama_version = k_ollama_newest, ollama_parallel = "1", ollama_overhead = "0";
  std::string parallel = "1", fit_target = "1024", fit_ctx = "4096", build;
  bool fit = false, ctx_given = false;
  bool flash_attn = false, swa_full = false, no_op_offload = false, kv_unified = false;
};

std::vector<double> parse_split(const std::string& flag, const std::string& text) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const double x = parse_real(flag, part);
    if (x < 0) throw Error(flag, "\"" + part + "\" must be 0 or more");
    out.push_back(x);
  }
  double sum = 0;
  for (double x : out) sum += x;
  if (out.empty() || sum <= 0) throw Error(flag, "\"" + text + "\" needs a share above 0 (e.g. 3,1)");
  return out;
}

Built build(const State& s) {
  RawPlan raw = s.plan;
  if (!raw.given.count("mode")) raw.given["mode"] = "infer";
  const Plan plan = resolve_plan(raw);
  const EstimateRequest& r = plan.request;
  if (r.mode != Mode::infer) throw Error("--mode", "gguf-fit plans inference (expected infer)");
  if (!r.model.arch)
    throw Error("--model", "gguf-fit needs the model's architecture (--model, --config or --gguf)");
  if (r.quantize)
    throw Error("--quantize", "gguf-fit takes a llama.cpp file type (q4_k_m, q8_0, ...), not \"" +
                                  storage_format(*r.quantize).name + "\"");
  if (!plan.gpu_given) throw Error("--gpu", "required: the GPUs llama.cpp runs on (e.g. --gpu rtx-4090)");
  Built b;
  LlamaCppRequest& q = b.request;
  q.arch = *r.model.arch;
  if (auto g = raw.given.find("gguf"); g != raw.given.end()) {
    if (r.llama_ftype)
      throw Error("--quantize", "applies to --model or --config; a GGUF file is already quantised");
    q.weights = read_gguf_file(g->second);
    b.model_arg = g->second;
  } else {
    const LlamaFtype& f = *llama_ftype(r.llama_ftype.value_or(1));
    q.weights = gguf_of_arch(q.arch, f);
    b.model_arg = r.model.id + "-" + f.name + ".gguf";
  }
  q.n_ctx = parse_tokens("--ctx-size", s.ctx, 1ull << 24);
  if (!q.n_ctx) throw Error("--ctx-size", "\"" + s.ctx + "\" must be at least 1");
  q.n_ubatch = parse_tokens("--ubatch-size", s.ubatch, 1ull << 20);
  if (!q.n_ubatch) throw Error("--ubatch-size", "\"" + s.ubatch + "\" must be at least 1");
  q.cache_k = cache_type("--cache-type-k", s.cache_k);
  q.cache_v = cache_type("--cache-type-v", s.cache_v);
  q.flash_attn = s.flash_attn;
  q.swa_full = s.swa_full;
  q.op_offload = !s.no_op_offload;
  // llama-server (tools/server/server.cpp, PR 16736): -np 1 without -kvu becomes 4 sequences in
  // one unified cache; -np N > 1 alone gives each sequence its own stream.
  const uint64_t np = parse_count("--parallel", s.parallel, 256);
  if (np == 0) throw Error("--parallel", "\"" + s.parallel + "\" must be at least 1");
  q.n_seq = np == 1 && !s.kv_unified ? 4 : np;
  q.kv_unified = s.kv_unified || np == 1;
  // llama-server from b9460 (PR 23861, server_n_outputs_max) reserves min(n_batch, n_parallel)
  // output rows, n_batch 2048 by default; earlier builds every token of the micro-batch.
  uint64_t build_no = 0;
  if (!s.build.empty()) {
    const std::string digits = s.build[0] == 'b' ? s.build.substr(1) : s.build;
    build_no = parse_count("--llamacpp-build", digits, 1ull << 24);
  }
  q.n_outputs = build_no && build_no < 9460 ? 0 : std::min<uint64_t>(2048, q.n_seq);
  if (s.ngl_order != "output-first" && s.ngl_order != "layers-first")
    throw Error("--ngl-order",
                "\"" + s.ngl_order + "\" is not an order (expected output-first or layers-first)");
  q.output_first = s.ngl_order == "output-first";
  if (!s.ngl.empty())
    q.n_gpu_layers = std::min(parse_count("--n-gpu-layers", s.ngl, 1ull << 20), q.arch.layers + 1);
  q.n_cpu_moe = parse_count("--n-cpu-moe", s.cpu_moe, 1ull << 20);
  if (q.n_cpu_moe && q.arch.experts < 2)
    throw Error("--n-cpu-moe", "applies to mixture-of-experts models (this one has no experts)");
  if (!s.mmproj.empty()) {
    for (const GgufTensor& t : read_gguf_file(s.mmproj).tensors) q.mmproj_bytes += t.bytes;
  }
  for (const GpuSpec& g : plan.targets.gpus) {
    b.gpus.push_back(g);
    q.gpu_bytes.push_back(g.usable_bytes());
  }
  if (!s.split.empty()) {
    q.tensor_split = parse_split("--tensor-split", s.split);
    if (q.tensor_split.size() != q.gpu_bytes.size())
      throw Error("--tensor-split", "\"" + s.split + "\" has " + std::to_string(q.tensor_split.size()) +
                                        " parts for " + std::to_string(q.gpu_bytes.size()) + " GPUs");
  }
  q.reserve_bytes = r.overhead_bytes;
  try {
    b.ollama_version = parse_ollama_version(s.ollama_version);
  } catch (const Error& e) {
    throw Error("--ollama-version", e.message());
  }
  b.ollama_parallel = parse_count("--ollama-parallel", s.ollama_parallel, 1024);
  if (!b.ollama_parallel)
    throw Error("--ollama-parallel", "\"" + s.ollama_parallel + "\" must be at least 1");
  b.ollama_overhead = parse_size("--ollama-gpu-overhead", s.ollama_overhead);
  return b;
}

void validate(const LlamaCppRequest& q) {
  const bool quantised_v = q.cache_v != "F16" && q.cache_v != "F32" && q.cache_v != "BF16";
  if (quantised_v && !q.flash_attn)
    throw Error("--cache-type-v", "a quantised V cache needs --flash-attn (llama.cpp refuses it without)");
}

// llama.cpp's name for the i-th GPU of a backend: ggml-cuda's GGML_CUDA_NAME is "CUDA", and "ROCm" in
// a HIP build (ggml-cuda/vendors/hip.h); ggml-metal's GGML_METAL_NAME is "MTL" (ggml-metal.cpp; builds

// --fit: llama.cpp's own fit of what the user left unset (llamacpp_fit.hpp).
void apply_fit(const State& s, Built& b) {
  LlamaCppFitOptions o;
  o.margin_bytes = parse_count("--fit-target", s.fit_target, 1ull << 24) << 20;
  o.n_ctx_min = parse_tokens("--fit-ctx", s.fit_ctx, 1ull << 24);
  o.n_ctx_train = b.request.arch.max_positions;
  if (!s.ctx_given && !o.n_ctx_train)
    throw Error("--fit",
                "the model's training context is unknown (llama.cpp starts from it): give --ctx-size");
  o.ctx_set = s.ctx_given;
  o.ngl_set = !s.ngl.empty();
  o.split_set = !s.split.empty();
  b.fit = llamacpp_fit(b.request, o);
  b.request = b.fit->request;
}

}  // namespace

void add_gguf_fit(CLI::App& sub, Runner& run) {
  auto s = std::make_shared<State>();
  add_plan_options(sub, s->plan, PlanScope::llamacpp);
  add_output_options(sub, s->output);
  CLI::Option* ctx_opt = sub.add_option("--ctx-size", s->ctx,
                                        "llama.cpp -c: context length in tokens (default 4096; 8k = 8,192)");
  sub.add_flag(
      "--fit", s->fit,
      "llama.cpp -fit on: lower what is not given (--ctx-size from the model's training context, then "
      "-ngl or the experts on the CPU) until every GPU keeps --fit-target free");
  sub.add_option("--fit-target", s->fit_target,
                 "llama.cpp -fitt: MiB --fit keeps free on each GPU (default 1024)");
  sub.add_option("--fit-ctx", s->fit_ctx,
                 "llama.cpp -fitc: the shortest context --fit may set (default 4096)");
  sub.add_option("--ubatch-size", s->ubatch, "llama.cpp -ub: tokens per evaluation (default 512; k = 1,024)");
  sub.add_option("--cache-type-k", s->cache_k, "K cache type: f16 (default), q8_0, q4_0, ...");
  sub.add_option("--cache-type-v", s->cache_v,
                 "V cache type: f16 (default), q8_0, q4_0 (needs --flash-attn)");
  sub.add_flag("--flash-attn", s->flash_attn,
               "llama.cpp -fa: flash attention (no n_ctx x n_ubatch score matrix)");
  sub.add_flag("--swa-full", s->swa_full,
               "llama.cpp --swa-full: sliding-window layers keep the whole context (default: the window)");
  sub.add_option(
      "--llamacpp-build", s->build,
      "llama.cpp build (b9460 or 9460) whose llama-server rules to follow (default: the newest; before "
      "b9460 the logits of every -ub token are reserved)");
  sub.add_option("--parallel", s->parallel,
                 "llama-server -np: sequences (default: -np 1 without --kv-unified, which llama-server runs "
                 "as 4 sequences in one unified cache)");
  sub.add_flag(
      "--kv-unified", s->kv_unified,
      "llama.cpp -kvu: one cache for every sequence (without it -np N > 1 splits n_ctx per sequence)");
  sub.add_flag("--no-op-offload", s->no_op_offload,
               "llama.cpp --no-op-offload: host layers' products stay on the CPU (default: on GPU 0 from 32 "
               "tokens, their weights copied into its compute buffer)");
  sub.add_option("--ngl-order", s->ngl_order,
                 "Which layers -ngl N offloads: output-first (llama.cpp from PR 18148, December 2025: the "
                 "output layer, then the last N-1; default) or layers-first (earlier builds: the last N)");
  sub.add_option("--n-gpu-layers", s->ngl,
                 "llama.cpp -ngl: layers on the GPUs (default: the largest that fits)");
  sub.add_option("--tensor-split", s->split,
                 "llama.cpp -ts: shares of the layers per GPU, e.g. 3,1 (default: by memory)");
  sub.add_option("--n-cpu-moe", s->cpu_moe,
                 "llama.cpp --n-cpu-moe: expert tensors of the first N layers on the CPU");
  sub.add_option("--mmproj", s->mmproj, "A multimodal projector .gguf (loaded on the first GPU)");
  sub.add_option(
      "--ollama-version", s->ollama_version,
      std::string("Ollama release whose placement rule to follow (default ") + k_ollama_newest + ")");
  sub.add_option("--ollama-parallel", s->ollama_parallel, "OLLAMA_NUM_PARALLEL: sequences (default 1)");
  sub.add_option("--ollama-gpu-overhead", s->ollama_overhead,
                 "OLLAMA_GPU_OVERHEAD: memory Ollama keeps free per GPU (default 0)");
  sub.add_option("--check-log", s->check_log,
                 "A llama.cpp log: compare its printed buffer sizes with the prediction");
  run = [s, ctx_opt](Io& io) {
    const OutputOptions out = resolve_output_options(s->output, io);
    s->ctx_given = ctx_opt->count() > 0;
    Built b = build(*s);
    validate(b.request);
    if (s->fit) apply_fit(*s, b);
    if (!s->check_log.empty()) return check_log(b, s->check_log, out, io);
    const LlamaCppPlan p = plan_llamacpp(b.request);
    return render(b, p, out, io);
  };
}

}  // namespace memplan::cli
