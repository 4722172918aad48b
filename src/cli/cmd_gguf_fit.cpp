// memplan gguf-fit: llama.cpp / Ollama on these GPUs - the largest -ngl that fits, where the
// model, the KV cache and the compute buffers go, the flags; --check-log compares with a log.
#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/quantity_kinds.hpp"

#include "cli/command.hpp"
#include "cli/plan_options.hpp"
#include "cli/render_cuda_context.hpp"
#include "cli/text_table.hpp"
#include "core/base/file_reader.hpp"
#include "core/formats/llama_quant.hpp"
#include "core/models/gguf.hpp"
#include "core/models/gguf_mix.hpp"
#include "core/serving/llamacpp.hpp"
#include "core/serving/llamacpp_failure.hpp"
#include "core/serving/llamacpp_fit.hpp"
#include "core/serving/llamacpp_log.hpp"
#include "core/serving/ollama_placement.hpp"

namespace memplan::cli {
namespace {

constexpr double k_mib = 1024.0 * 1024.0;

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

// --cache-type-k/-v: the types llama.cpp accepts for the cache (common/arg.cpp kv_cache_types).
std::string cache_type(const std::string& flag, const std::string& text) {
  static const char* types[] = {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"};
  for (const char* t : types)
    if (text == t) {
      std::string up = t;
      for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return up;
    }
  throw Error(
      flag,
      "\"" + text +
          "\" is not a llama.cpp cache type (expected f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1)");
}

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

double in_mib(uint64_t bytes) { return static_cast<double>(bytes) / k_mib; }

std::string mib(uint64_t bytes) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(2);
  o << static_cast<double>(bytes) / k_mib << " MiB";
  return o.str();
}

std::string cache_lower(std::string t) {
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return t;
}

std::string flags_of(const LlamaCppRequest& q, const LlamaCppPlan& p, const std::string& model_arg) {
  std::string s = "llama-server -m " + model_arg + " -c " + std::to_string(q.n_ctx) + " -ub " +
                  std::to_string(q.n_ubatch) + " -ngl " + std::to_string(p.n_gpu_layers);
  if (q.flash_attn) s += " -fa on";
  if (q.swa_full) s += " --swa-full";
  if (!q.op_offload) s += " --no-op-offload";
  if (!(q.n_seq == 4 && q.kv_unified)) s += " -np " + std::to_string(q.n_seq) + (q.kv_unified ? " -kvu" : "");
  if (q.cache_k != "F16") s += " --cache-type-k " + cache_lower(q.cache_k);
  if (q.cache_v != "F16") s += " --cache-type-v " + cache_lower(q.cache_v);
  if (q.gpu_bytes.size() > 1) {
    std::string ts;
    for (const LlamaCppDevice& d : p.gpus)
      ts += (ts.empty() ? "" : ",") + std::to_string(d.layers + d.output);
    s += " -ts " + ts;
  }
  if (q.n_cpu_moe) s += " --n-cpu-moe " + std::to_string(q.n_cpu_moe);
  return s;
}

// The Ollama equivalents (options of the API / Modelfile and the server's environment) and the
// num_gpu Ollama picks by its own estimate when none is set (ollama_placement.hpp).
std::string ollama_of(const LlamaCppRequest& q, const OllamaPlacement& o, const OllamaVersion& v) {
  std::string s = "ollama " + v.text + ": num_ctx " + std::to_string(q.n_ctx) + ", num_batch " +
                  std::to_string(q.n_ubatch) + " -> Ollama places num_gpu " + std::to_string(o.layers) +
                  " of " + std::to_string(o.model_layers);
  if (o.split.size() > 1) {
    std::string ts;
    for (uint64_t n : o.split) ts += (ts.empty() ? "" : ",") + std::to_string(n);
    s += " (split " + ts + ")";
  }
  if (q.flash_attn) s += "; OLLAMA_FLASH_ATTENTION=1";
  if (q.cache_k != "F16") s += " OLLAMA_KV_CACHE_TYPE=" + cache_lower(q.cache_k);
  return s;
}

struct Built {
  LlamaCppRequest request;
  std::string model_arg;
  std::vector<GpuSpec> gpus;
  OllamaVersion ollama_version;
  uint64_t ollama_parallel = 1, ollama_overhead = 0;
  std::optional<LlamaCppFit> fit;  // --fit: what llama.cpp's own fit changed
};

// Ollama's view of the same run: its version's rule, the GPUs' free memory (`free`, default
// what memplan counts usable), OLLAMA_NUM_PARALLEL and OLLAMA_GPU_OVERHEAD.
OllamaPlacement ollama_placement(const Built& b, const std::vector<uint64_t>* free = nullptr) {
  const LlamaCppRequest& q = b.request;
  OllamaPlacementRequest o;
  o.graph.weights = &q.weights;
  o.graph.arch = q.arch;
  o.graph.num_ctx = q.n_ctx;
  o.graph.num_batch = q.n_ubatch;
  o.graph.num_parallel = b.ollama_parallel;
  o.graph.kv_type = cache_lower(q.cache_k);
  o.graph.flash_attn = q.flash_attn;
  o.rule = ollama_rule(b.ollama_version);
  o.free_bytes = free ? *free : q.gpu_bytes;
  o.gpu_overhead = b.ollama_overhead;
  // ml/device.go MinimumMemory (discover/gpu.go before v0.12.11): 512 MiB on Metal, else 457 MiB.
  o.metal = !b.gpus.empty() && gpu_runtime(b.gpus[0]) == GpuRuntime::metal;
  o.minimum_bytes = (o.metal ? 512ull : 457ull) << 20;
  o.projector_bytes = q.mmproj_bytes;
  if (q.n_gpu_layers) o.num_gpu = static_cast<long>(*q.n_gpu_layers);
  OllamaPlacement placed = place_ollama(o);
  if (o.rule == OllamaRule::llama_server_fit) {
    // llm/llama_server.go passes -ngl only when num_gpu is set; else llama.cpp's fit decides.
    LlamaCppRequest fit = q;
    if (free) fit.gpu_bytes = *free;
    // Its runner's sequences are OLLAMA_NUM_PARALLEL's, in one cache (not llama-server's 4).
    fit.n_seq = b.ollama_parallel;
    fit.kv_unified = true;
    const LlamaCppPlan lp = plan_llamacpp(fit);
    placed.layers = lp.n_gpu_layers;
    placed.split.clear();
    placed.allocations.clear();
    for (const LlamaCppDevice& d : lp.gpus) {
      placed.split.push_back(d.layers + d.output);
      placed.allocations.push_back(d.total());
    }
  }
  return placed;
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
// before the backend registry printed "Metal").
const char* device_prefix(const GpuSpec& gpu) {
  switch (gpu_runtime(gpu)) {
    case GpuRuntime::rocm:
      return "ROCm";
    case GpuRuntime::metal:
      return "MTL";
    case GpuRuntime::cuda:
      break;
  }
  return "CUDA";
}

std::string device_name(const GpuSpec& gpu, size_t i) { return device_prefix(gpu) + std::to_string(i); }

// A log's GPU buffer ("CUDA0", "ROCm1", "MTL0"; not "CUDA_Host"): its index, or -1.
long gpu_buffer_index(const std::string& dev) {
  if (dev.find("Host") != std::string::npos) return -1;
  for (const char* prefix : {"CUDA", "ROCm", "MTL"}) {
    const size_t n = std::char_traits<char>::length(prefix);
    if (dev.compare(0, n, prefix) == 0 && dev.size() > n && dev[n] >= '0' && dev[n] <= '9')
      return std::strtol(dev.c_str() + n, nullptr, 10);
  }
  return -1;
}

nlohmann::json ollama_json(const Built& b, const OllamaPlacement& o) {
  return {{"version", b.ollama_version.text},
          {"rule", ollama_rule_source(ollama_rule(b.ollama_version))},
          {"num_gpu", o.layers},
          {"model_layers", o.model_layers},
          {"split", o.split},
          {"allocations_bytes", o.allocations},
          {"graph_family", o.graph.family},
          {"graph_full_bytes", o.graph.full_offload},
          {"graph_partial_bytes", o.graph.partial_offload},
          {"kv_bytes", o.graph.kv_total},
          {"layer_buffer_bytes", o.layer_buffer},
          {"output_layer_bytes", o.output_bytes}};
}

// --explain: what the host's layers and the pipeline add to the GPUs' compute buffers.
void explain_host_work(const LlamaCppRequest& q, const LlamaCppPlan& p, uint64_t T, Io& io) {
  if (p.gpus.empty()) return;
  io.out << "  -ngl order: "
         << (q.output_first
                 ? "output-first (llama.cpp PR 18148 on: the output layer, then the last layers)"
                 : "layers-first (builds before llama.cpp PR 18148: the last layers, the output at "
                   "layers + 1)")
         << "\n";
  if (!q.op_offload || T < 32) {
    if (p.host.layers || !p.gpus.back().output)
      io.out << "  host layers: computed on the CPU ("
             << (q.op_offload ? "fewer than 32 tokens per evaluation" : "--no-op-offload") << ")\n";
  }
  if (p.compute_host_attention)
    io.out << "  compute, host layer on GPU 0 (op offload from 32 tokens): attention stage + its K and V "
              "copied in = "
           << mib(p.compute_host_attention) << "\n";
  if (p.compute_host_weight)
    io.out << "  compute, host weight on GPU 0: the largest host tensor copied in, one per split, + its "
              "product's activations = "
           << mib(p.compute_host_weight) << "\n";
  if (p.compute_host_output)
    io.out << "  compute, output layer on the CPU: its product runs on GPU 0 with the output matrix copied "
              "in: output stage + matrix = "
           << mib(p.compute_host_output) << "\n";
  if (p.pipeline_copies > 1)
    io.out << "  pipeline parallelism (" << p.gpus.size()
           << " GPUs, every layer offloaded): " << p.pipeline_copies
           << " copies of each split input kept: + 3 masks and 4 hidden states = "
           << mib(p.compute_pipeline_extra) << " on each GPU with layers\n";
}

const char* stage_name(LlamaCppStage s) {
  switch (s) {
    case LlamaCppStage::model:
      return "model";
    case LlamaCppStage::kv:
      return "KV cache";
    case LlamaCppStage::compute:
      return "compute";
    case LlamaCppStage::projector:
      return "projector";
  }
  return "";
}

// The first allocation llama.cpp would fail, with its log lines (CUDA and ROCm builds).
std::optional<LlamaCppFailure> start_failure(const Built& b, const LlamaCppPlan& p) {
  if (p.fits || b.gpus.empty()) return std::nullopt;
  return llamacpp_start_failure(b.request, p, device_prefix(b.gpus[0]));
}

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

int render(const Built& b, const LlamaCppPlan& p, const OutputOptions& out, Io& io) {
  const LlamaCppRequest& q = b.request;
  if (out.format == Format::json) {
    nlohmann::json gpus = nlohmann::json::array();
    for (size_t i = 0; i < p.gpus.size(); ++i) {
      const LlamaCppDevice& d = p.gpus[i];
      gpus.push_back({{"gpu", b.gpus[i].id},
                      {"memory_bytes", q.gpu_bytes[i]},
                      {"layers", d.layers},
                      {"output_layer", d.output},
                      {"model_bytes", d.model},
                      {"kv_bytes", d.kv},
                      {"compute_bytes", d.compute},
                      {"projector_bytes", d.projector},
                      {"reserve_bytes", d.reserve},
                      {"total_bytes", d.total()},
                      {"fits", static_cast<bool>(p.gpu_fits[i])}});
    }
    nlohmann::json doc = {
        {"schema", "memplan.gguf-fit/1"},
        {"n_gpu_layers", p.n_gpu_layers},
        {"layers", p.n_layers},
        {"n_ctx", q.n_ctx},
        {"kv_cells", p.n_ctx_cells},
        {"n_ubatch", q.n_ubatch},
        {"cache_type_k", cache_lower(q.cache_k)},
        {"cache_type_v", cache_lower(q.cache_v)},
        {"flash_attn", q.flash_attn},
        {"layer_bytes", p.layer_bytes},
        {"token_embd_bytes", p.token_embd_bytes},
        {"output_bytes", p.output_bytes},
        {"kv_layer_bytes", p.kv_layer_bytes},
        {"kv_swa_cells", p.n_swa_cells},
        {"kv_swa_layer_bytes", p.kv_swa_layer_bytes},
        {"compute_attention_bytes", p.compute_attention},
        {"compute_output_bytes", p.compute_output},
        {"op_offload", q.op_offload},
        {"n_seq", q.n_seq},
        {"n_outputs", q.n_outputs},
        {"kv_unified", q.kv_unified},
        {"ngl_order", q.output_first ? "output-first" : "layers-first"},
        {"compute_host_attention_bytes", p.compute_host_attention},
        {"compute_host_weight_bytes", p.compute_host_weight},
        {"compute_host_output_bytes", p.compute_host_output},
        {"pipeline_copies", p.pipeline_copies},
        {"pipeline_retried", p.pipeline_retried},
        {"compute_pipeline_extra_bytes", p.compute_pipeline_extra},
        {"gpus", gpus},
        {"host", {{"model_bytes", p.host.model}, {"kv_bytes", p.host.kv}, {"layers", p.host.layers}}},
        {"fits", p.fits},
        {"llama_cpp", flags_of(q, p, b.model_arg)},
        {"ollama", ollama_json(b, ollama_placement(b))}};
    if (b.fit)
      doc["fit"] = {{"steps", b.fit->steps},
                    {"failure", b.fit->failure},
                    {"changed", b.fit->changed},
                    {"n_ctx", b.request.n_ctx},
                    {"n_cpu_moe", b.request.n_cpu_moe}};
    if (const auto f = start_failure(b, p))
      doc["start_failure"] = {{"stage", stage_name(f->stage)},
                              {"gpu", device_name(b.gpus[f->gpu], f->gpu)},
                              {"bytes", f->bytes},
                              {"free_bytes", f->free},
                              {"log", f->lines}};
    io.out << doc.dump(2) << "\n";
    return p.fits ? k_ok : k_no_fit;
  }
  using A = TextTable::Align;
  TextTable t({{"device", A::left},
               {"layers", A::right},
               {"model", A::right},
               {"KV cache", A::right},
               {"compute", A::right},
               {"other", A::right},
               {"total", A::right},
               {"of", A::right},
               {"fits", A::left}});
  for (size_t i = 0; i < p.gpus.size(); ++i) {
    const LlamaCppDevice& d = p.gpus[i];
    t.add_row({device_name(b.gpus[i], i) + " (" + b.gpus[i].id + ")",
               std::to_string(d.layers) + (d.output ? "+out" : ""), mib(d.model), mib(d.kv), mib(d.compute),
               mib(d.projector + d.reserve), mib(d.total()), mib(q.gpu_bytes[i]),
               p.gpu_fits[i] ? "yes" : "no"});
  }
  t.add_row({"CPU (host RAM)", std::to_string(p.host.layers) + (p.host.output ? "+out" : ""),
             mib(p.host.model), mib(p.host.kv), "-", "-", mib(p.host.model + p.host.kv), "-", "-"});
  io.out << (out.format == Format::markdown ? t.render_markdown() : t.render());
  if (out.quiet) return p.fits ? k_ok : k_no_fit;
  io.out << "\n  -ngl " << p.n_gpu_layers << " of " << p.n_layers + 1 << " (" << p.n_layers
         << " repeating layers + the output layer)" << (q.n_gpu_layers ? "" : ": the largest that fits")
         << "\n";
  const OllamaPlacement o = ollama_placement(b);
  io.out << "  " << flags_of(q, p, b.model_arg) << "\n  " << ollama_of(q, o, b.ollama_version) << "\n";
  if (b.fit) {
    io.out << "  llama.cpp --fit (llama_params_fit):\n";
    for (const std::string& st : b.fit->steps) io.out << "    " << st << "\n";
  }
  if (p.pipeline_retried)
    io.out << "  pipeline parallelism's 4 copies do not fit: llama.cpp reserves again with one (\"compute "
              "buffer allocation failed, retrying without pipeline parallelism\")\n";
  if (const auto f = start_failure(b, p)) {
    io.out << "  llama.cpp stops at the " << stage_name(f->stage) << " buffer of "
           << device_name(b.gpus[f->gpu], f->gpu) << " (" << mib(f->bytes) << ", " << mib(f->free)
           << " left):\n";
    for (const std::string& l : f->lines) io.out << "    " << l << "\n";
  }
  if (out.explain) {
    io.out << "\n  KV cache per layer: " << p.n_ctx_cells << " cells (n_ctx " << q.n_ctx
           << " padded to 256) x ";
    if (q.arch.mla())
      io.out << q.arch.kv_lora_rank + q.arch.qk_rope_head_dim << " (kv_lora_rank + qk_rope_head_dim) in "
             << cache_lower(q.cache_k) << ", no V row (MLA)";
    else
      io.out << q.arch.resolved_kv_heads() * q.arch.resolved_head_dim() << " (kv_heads x head_dim) in "
             << cache_lower(q.cache_k) << " + " << cache_lower(q.cache_v);
    io.out << " = " << mib(p.kv_layer_bytes) << "\n";
    if (p.n_swa_cells) {
      uint64_t window = 0;
      for (bool w : p.swa_layers) window += w;
      io.out << "  window layers (" << window << " of " << p.n_layers << "): " << p.n_swa_cells << " cells ("
             << (q.swa_full ? "--swa-full: n_ctx"
                            : "min(n_ctx, window " + std::to_string(q.arch.attention_window) +
                                  " + n_ubatch " + std::to_string(q.n_ubatch) + ")")
             << " padded to 256) = " << mib(p.kv_swa_layer_bytes) << " each\n";
    }
    const uint64_t T = std::min(q.n_ctx, q.n_ubatch);
    if (q.flash_attn)
      io.out << "  compute, attention: f16 mask " << p.n_ctx_cells << " x pad64(" << T << ") x 2 + 3 x "
             << q.arch.hidden << " x " << T << " x 4 = " << mib(p.compute_attention) << "\n";
    else
      io.out << "  compute, attention: scores " << p.n_ctx_cells << " x " << T << " x " << q.arch.heads
             << " heads x 4 + f32 mask " << p.n_ctx_cells << " x pad64(" << T << ") x 4 + 2 x "
             << q.arch.hidden << " x " << T << " x 4 = " << mib(p.compute_attention) << "\n";
    io.out << "  compute, output: logits " << q.arch.vocab << " x " << T << " x 4 + " << q.arch.hidden
           << " x " << T << " x 4 = " << mib(p.compute_output) << " (on the GPU with the output layer)\n";
    explain_host_work(q, p, T, io);
    io.out << "  model: token_embd " << mib(p.token_embd_bytes) << " stays on the CPU; output layer "
           << mib(p.output_bytes) << "; repeating layer 0 "
           << mib(p.layer_bytes.empty() ? 0 : p.layer_bytes[0]) << "\n";
    io.out << "  ollama " << b.ollama_version.text << " ("
           << ollama_rule_source(ollama_rule(b.ollama_version)) << "): its own estimate, " << o.graph.family
           << " graph: full offload " << mib(o.graph.full_offload) << ", partial "
           << mib(o.graph.partial_offload) << " (counted: " << mib(o.graph_used) << "); KV "
           << mib(o.graph.kv_total) << "; one-layer buffer " << mib(o.layer_buffer) << "; output layer "
           << mib(o.output_bytes) << "; per GPU: minimum "
           << (!b.gpus.empty() && gpu_runtime(b.gpus[0]) == GpuRuntime::metal ? "512" : "457")
           << " MiB + OLLAMA_GPU_OVERHEAD " << mib(b.ollama_overhead) << "\n";
    io.out << "  other: " << runtime_name(b.gpus.empty() ? GpuRuntime::cuda : gpu_runtime(b.gpus[0]))
           << " context and workspaces (--overhead) and the projector (--mmproj)\n";
  }
  return p.fits ? k_ok : k_no_fit;
}

// --check-log: the log's own settings, then the prediction against its printed buffers.
int check_log(Built b, const std::string& path, const OutputOptions& out, Io& io) {
  const LlamaCppLog log = parse_llamacpp_log(read_small_file(path, read_limit::k_config, "--check-log"));
  if (log.empty())
    throw Error("--check-log", "\"" + path +
                                   "\" has no llama.cpp buffer lines (\"CUDA0 model buffer size\", \"KV self "
                                   "size\", \"compute buffer size\")");
  LlamaCppRequest& q = b.request;
  if (log.n_ctx) q.n_ctx = *log.n_ctx;
  if (log.n_ubatch) q.n_ubatch = *log.n_ubatch;
  if (log.flash_attn) q.flash_attn = *log.flash_attn;
  if (log.sched_copies) q.sched_max_copies = *log.sched_copies;  // a build's GGML_SCHED_MAX_COPIES
  // The log's own sequences; builds before llama.cpp PR 14363 print neither and always unify.
  q.n_seq = log.n_seq_max.value_or(1);
  q.n_outputs = log.n_outputs_max.value_or(0);  // older logs print none: every token
  q.kv_unified = log.kv_unified.value_or(true);
  if (!log.cache_k.empty()) q.cache_k = cache_type("--check-log", log.cache_k);
  if (!log.cache_v.empty()) q.cache_v = cache_type("--check-log", log.cache_v);
  struct LogRow {
    std::string what;
    double predicted, logged;
    double slack = 0;  // MiB the log's rounding allows besides the 5%
    // With mmap the CPU_Mapped buffer is the file's range from the first to the last host tensor
    // (llama-model.cpp load_all_data maps one span per file): the host tensors at least, and the
    // GPU tensors stored between them. Only a logged span below the prediction is an error.
    bool span = false;
  };
  std::vector<LogRow> rows;
  if (log.ollama) {
    // Ollama's estimate before it started the runner: the same inputs (free memory, overhead,
    // requested layers) through memplan's copy of that version's rule. The runner's -c is
    // num_ctx x OLLAMA_NUM_PARALLEL.
    const OllamaOffloadLine& ol = *log.ollama;
    Built ob = b;
    ob.request.n_ctx = std::max<uint64_t>(q.n_ctx / b.ollama_parallel, 1);
    ob.request.n_gpu_layers.reset();
    if (ol.requested >= 0) ob.request.n_gpu_layers = static_cast<uint64_t>(ol.requested);
    if (ol.gpu_overhead) ob.ollama_overhead = static_cast<uint64_t>(*ol.gpu_overhead);
    std::vector<uint64_t> free;
    for (double x : ol.available) free.push_back(static_cast<uint64_t>(x));
    if (free.empty()) free = q.gpu_bytes;
    const OllamaPlacement o = ollama_placement(ob, &free);
    // HumanBytes2 prints one decimal: a logged "1.3 GiB" is 1.25 - 1.35 GiB.
    auto slack = [](double logged_mib) { return logged_mib >= 1024 ? 0.05 * 1024 : 0.05; };
    rows.push_back(
        {"Ollama num_gpu (layers)", static_cast<double>(o.layers), static_cast<double>(ol.offload)});
    if (ol.kv)
      rows.push_back({"Ollama KV estimate", in_mib(o.graph.kv_total), *ol.kv / k_mib, slack(*ol.kv / k_mib)});
    if (ol.graph_full)
      rows.push_back({"Ollama graph, full offload", in_mib(o.graph.full_offload), *ol.graph_full / k_mib,
                      slack(*ol.graph_full / k_mib)});
    if (ol.graph_partial)
      rows.push_back({"Ollama graph, partial offload", in_mib(o.graph.partial_offload),
                      *ol.graph_partial / k_mib, slack(*ol.graph_partial / k_mib)});
    if (!log.offloaded) q.n_gpu_layers = o.layers;
  }
  if (log.offloaded) q.n_gpu_layers = *log.offloaded;
  // A partial offload shows the build's order: the output layer among the offloaded ones (PR 18148
  // on) or not (earlier builds).
  if (log.offloaded && log.layers_total && *log.offloaded < *log.layers_total)
    q.output_first = log.output_offloaded;
  q.reserve_bytes = 0;
  const LlamaCppPlan p = plan_llamacpp(q);
  for (const auto& [dev, v] : log.model_mib) {
    if (const long i = gpu_buffer_index(dev); i >= 0) {
      if (static_cast<size_t>(i) < p.gpus.size())
        rows.push_back({dev + " model", in_mib(p.gpus[i].model), v});
    } else if (dev == "CPU" || dev == "CPU_Mapped") {
      rows.push_back({dev + " model", in_mib(p.host.model), v, 0, dev == "CPU_Mapped"});
    }
  }
  uint64_t kv_total = p.host.kv;
  for (const LlamaCppDevice& d : p.gpus) kv_total += d.kv;
  if (log.kv_total_mib) rows.push_back({"KV cache", in_mib(kv_total), *log.kv_total_mib});
  for (const auto& [dev, v] : log.compute_mib) {
    const long i = gpu_buffer_index(dev);
    if (i >= 0 && static_cast<size_t>(i) < p.gpus.size())
      rows.push_back({dev + " compute", in_mib(p.gpus[i].compute), v});
  }
  bool all = true;
  nlohmann::json list = nlohmann::json::array();
  using A = TextTable::Align;
  TextTable t({{"buffer", A::left},
               {"predicted", A::right},
               {"logged", A::right},
               {"error", A::right},
               {"within 5%", A::left}});
  for (const LogRow& r : rows) {
    const double err = r.logged > 0 ? (r.predicted - r.logged) / r.logged : (r.predicted > 0 ? 1.0 : 0.0);
    const bool layers = r.what.find("(layers)") != std::string::npos;
    const bool ok = layers ? r.predicted == r.logged
                           : (err <= 0.05 && err >= -0.05) || std::abs(r.predicted - r.logged) <= r.slack ||
                                 (r.span && r.logged >= r.predicted);
    all = all && ok;
    std::ostringstream e, pr, lg;
    e.setf(std::ios::fixed);
    pr.setf(std::ios::fixed);
    lg.setf(std::ios::fixed);
    e.precision(2);
    pr.precision(2);
    lg.precision(2);
    e << err * 100 << "%";
    if (layers) {
      pr.precision(0);
      lg.precision(0);
    }
    pr << r.predicted << (layers ? "" : " MiB");
    lg << r.logged << (layers ? "" : " MiB");
    t.add_row({r.what, pr.str(), lg.str(), e.str(), ok ? "yes" : "no"});
    list.push_back({{"buffer", r.what},
                    {"predicted_mib", r.predicted},
                    {"logged_mib", r.logged},
                    {"error", err},
                    {"within_5_percent", ok}});
  }
  if (out.format == Format::json) {
    io.out << nlohmann::json{{"schema", "memplan.gguf-fit-check/1"},
                             {"n_ctx", q.n_ctx},
                             {"n_ubatch", q.n_ubatch},
                             {"flash_attn", q.flash_attn},
                             {"n_gpu_layers", p.n_gpu_layers},
                             {"buffers", list},
                             {"all_within_5_percent", all}}
                  .dump(2)
           << "\n";
  } else {
    io.out << "  the log's settings: n_ctx " << q.n_ctx << ", n_ubatch " << q.n_ubatch << ", flash_attn "
           << (q.flash_attn ? "on" : "off") << ", cache " << cache_lower(q.cache_k) << "/"
           << cache_lower(q.cache_v) << ", -ngl " << p.n_gpu_layers << "\n\n";
    io.out << (out.format == Format::markdown ? t.render_markdown() : t.render());
  }
  return all ? k_ok : k_no_fit;
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
