#pragma once
// How many layers Ollama puts on the GPUs (the num_gpu it picks when none is set), by Ollama
// version. Ollama does not ask llama.cpp what fits: it estimates each layer (its GGUF tensors
// plus Ollama's KV estimate), the compute graph (ollama_graph.hpp) and a per-GPU minimum, and
// places layers by its own rule. Three rules, each from ollama/ollama at the tags named:
//   memory_go_forward  v0.2.0 - v0.6.8   llm/memory.go EstimateGPULayers, layers 0 .. n-1
//   memory_go_backward v0.7.0 - v0.12.10 llm/memory.go estimateGPULayers, layers n-1 .. 0
//   layout             v0.12.11 - v0.25  llm/server.go llamaServer.Load + buildLayout /
//                                        assignLayers / findBestFit / greedyFit (commit f560bd077)
//   llama_server_fit   v0.30.0 and later llm/llama_server.go: Ollama starts upstream llama-server
//                                        without -ngl when num_gpu is unset, so llama.cpp's own
//                                        fit decides (the caller plans it with plan_llamacpp)

#include <cstdint>
#include <string>
#include <vector>

#include "core/serving/ollama_graph.hpp"

namespace memplan {

enum class OllamaRule { memory_go_forward, memory_go_backward, layout, llama_server_fit };

struct OllamaVersion {
  uint64_t major = 0, minor = 0, patch = 0;
  std::string text;
};

// "0.5.4", "v0.12.11", "0.13" (patch 0); throws Error("Ollama version", ...) otherwise, and
// for versions before 0.2.0 (whose estimator memplan does not model).
OllamaVersion parse_ollama_version(const std::string& text);
OllamaRule ollama_rule(const OllamaVersion& v);
const char* ollama_rule_source(OllamaRule r);  // "llm/memory.go (v0.3.0-v0.6.8)" ...

// The newest Ollama release whose rule memplan follows (the default of --ollama-version).
constexpr const char* k_ollama_newest = "0.30.11";

struct OllamaPlacementRequest {
  OllamaGraphRequest graph;
  OllamaRule rule = OllamaRule::layout;
  std::vector<uint64_t> free_bytes;       // each GPU's free memory as Ollama reads it
  uint64_t gpu_overhead = 0;              // OLLAMA_GPU_OVERHEAD, per GPU
  uint64_t minimum_bytes = 457ull << 20;  // per GPU: 457 MiB (CUDA, ROCm), 512 MiB on Metal
  bool metal = false;                     // Metal: no partial-offload graph
  uint64_t projector_bytes = 0;           // a llama-engine projector, on the first GPU
  long num_gpu = -1;                      // num_gpu requested; -1: Ollama picks
};

struct OllamaPlacement {
  OllamaGraph graph;
  uint64_t layers = 0;                // num_gpu Ollama passes to the runner (-ngl)
  uint64_t model_layers = 0;          // repeating layers + 1 (the output layer)
  std::vector<uint64_t> split;        // layers per GPU (the order of free_bytes)
  std::vector<uint64_t> allocations;  // Ollama's estimated bytes per GPU
  uint64_t layer_buffer = 0;          // blk.0 + its KV: the one-layer buffer Ollama keeps
  uint64_t output_bytes = 0;          // output_norm + output (or token_embd when tied)
  uint64_t graph_used = 0;            // the graph Ollama counted (full or partial)
};

// For llama_server_fit the graph and layer sizes are filled in but `layers` and `split` are left
// 0: llama.cpp's fit decides them.
OllamaPlacement place_ollama(const OllamaPlacementRequest& req);

}  // namespace memplan
