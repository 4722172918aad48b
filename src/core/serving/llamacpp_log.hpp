#pragma once
// What llama.cpp prints at start-up about its buffers (llama-cli, llama-server, Ollama's runner):
// the model buffers per device, the KV cache and the compute buffers, with the settings that
// decide them (n_ctx, n_ubatch, flash_attn, the cache types, the layers offloaded).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memplan {

// Ollama's own "msg=offload" line (llm/memory.go, llm/server.go): its estimate before starting
// the runner. Sizes as Ollama prints them (format.HumanBytes2: one decimal, 1024-based), in bytes.
struct OllamaOffloadLine {
  long requested = -1;
  uint64_t model_layers = 0, offload = 0;
  std::vector<uint64_t> split;      // empty: one GPU
  std::vector<double> available;    // per GPU
  std::vector<double> allocations;  // per GPU
  std::optional<double> gpu_overhead, kv, graph_full, graph_partial;
};

struct LlamaCppLog {
  std::optional<OllamaOffloadLine> ollama;
  std::map<std::string, double> model_mib;    // "CPU", "CUDA0", ... -> MiB (load_tensors)
  std::map<std::string, double> kv_mib;       // per device KV buffer
  std::map<std::string, double> compute_mib;  // per device compute buffer
  std::optional<double> kv_total_mib;         // "KV self size" / "llama_kv_cache: size"
  std::optional<uint64_t> n_ctx, n_ubatch, offloaded, layers_total;
  std::optional<uint64_t> sched_copies;
  std::optional<uint64_t> n_seq_max;      // "n_seq_max     = 4"
  std::optional<uint64_t> n_outputs_max;  // "n_outputs_max = 4" (llama-context.cpp of b9460 on)
  std::optional<bool> kv_unified;  // "kv_unified    = true"  // "pipeline parallelism enabled (n_copies=N)",
                                   // "sched copies = N"
  std::optional<bool> flash_attn;
  bool output_offloaded = false;  // "offloading output layer to GPU" / "offloading non-repeating layers"
  std::string cache_k, cache_v;   // "f16", "q8_0" as printed, or ""
  bool empty() const {
    return model_mib.empty() && kv_mib.empty() && compute_mib.empty() && !kv_total_mib && !ollama;
  }
};

// Reads the lines it knows; others are ignored. Ollama's "time=... msg=..." prefixes and
// journald prefixes are fine: a line is matched by what it contains.
LlamaCppLog parse_llamacpp_log(std::string_view text);

// "22.0 GiB", "313.0 MiB", "0 B" (Ollama's format.HumanBytes2) in bytes; nullopt if not one.
std::optional<double> parse_human_bytes(std::string_view text);

}  // namespace memplan
