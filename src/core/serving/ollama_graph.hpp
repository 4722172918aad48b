#pragma once
// Ollama's own estimate of a GGUF model's memory (its llama.cpp engine): the KV cache of each
// layer and the compute graph for full and for partial offload, as Ollama's GraphSize writes
// them (llm/ggml.go up to v0.5.x, fs/ggml/ggml.go from v0.6.0; the llama engine still uses it
// after v0.12.11). These are Ollama's formulas, not llama.cpp's buffers: Ollama places layers
// by them, so memplan needs them to say what num_gpu Ollama picks.

#include <cstdint>
#include <string>
#include <vector>

#include <memplan/model.hpp>
#include "core/models/gguf.hpp"

namespace memplan {

struct OllamaGraphRequest {
  const GgufFile* weights = nullptr;  // tensors and general.architecture
  TransformerArch arch;
  uint64_t num_ctx = 2048;      // per sequence; Ollama multiplies it by num_parallel
  uint64_t num_batch = 512;     // Ollama passes min(num_ctx, num_batch)
  uint64_t num_parallel = 1;    // OLLAMA_NUM_PARALLEL
  std::string kv_type = "f16";  // OLLAMA_KV_CACHE_TYPE (Ollama uses it only with flash attention)
  bool flash_attn = false;
};

struct OllamaGraph {
  std::string family;        // the GraphSize case used ("llama", "qwen2", "gemma", ... or "default")
  std::vector<uint64_t> kv;  // per repeating layer
  uint64_t kv_total = 0;
  uint64_t partial_offload = 0;  // after Ollama's fallbacks (gqa x kv / 6 when the case sets none)
  uint64_t full_offload = 0;
};

// The architecture name GraphSize switches on: general.architecture of a real GGUF, or the
// llama.cpp name of the config's model_type (mistral and mixtral convert to "llama").
std::string ollama_arch_name(const GgufFile& weights, const TransformerArch& arch);

OllamaGraph ollama_graph_size(const OllamaGraphRequest& req);

// Ollama's kvCacheBytesPerElement: q8_0 1, q4_0 0.5, else 2 (f16).
double ollama_kv_bytes_per_element(const std::string& kv_type);

}  // namespace memplan
