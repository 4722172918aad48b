// gguf-fit's shared pieces (see gguf_fit_common.hpp).
#include "cli/gguf_fit_common.hpp"

#include <sstream>

#include <memplan/error.hpp>
#include "cli/render_cuda_context.hpp"

namespace memplan::cli::gguf_fit {

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

// Ollama's view of the same run: its version's rule, the GPUs' free memory (`free`, default
// what memplan counts usable), OLLAMA_NUM_PARALLEL and OLLAMA_GPU_OVERHEAD.
OllamaPlacement ollama_placement(const Built& b, const std::vector<uint64_t>* free) {
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

}  // namespace memplan::cli::gguf_fit
