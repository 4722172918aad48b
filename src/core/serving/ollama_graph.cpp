// Ollama's GraphSize: its KV and compute-graph estimates per architecture (see ollama_graph.hpp).
// Formulas from ollama/ollama fs/ggml/ggml.go (v0.12.10, GGML.GraphSize; the same cases as
// llm/ggml.go of v0.5.4 for the families below).
#include "core/serving/ollama_graph.hpp"

#include <algorithm>

#include "core/base/checked.hpp"

namespace memplan {
namespace {

const GgufTensor* ollama_find_tensor(const GgufFile* g, const std::string& name) {
  if (!g) return nullptr;
  for (const GgufTensor& t : g->tensors)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace

double ollama_kv_bytes_per_element(const std::string& kv_type) {
  if (kv_type == "q8_0") return 1;
  if (kv_type == "q4_0") return 0.5;
  return 2;
}

std::string ollama_arch_name(const GgufFile& weights, const TransformerArch& arch) {
  std::string name = arch.model_type;
  if (auto it = weights.metadata.find("general.architecture");
      it != weights.metadata.end() && it->is_string())
    name = it->get<std::string>();
  // convert_hf_to_gguf.py writes these Hugging Face model types under llama.cpp's names.
  if (name == "mistral" || name == "mixtral") return "llama";
  if (name == "cohere") return "command-r";
  if (name == "phi") return "phi2";
  if (name == "deepseek_v2" || name == "deepseek_v3") return "deepseek2";
  if (name == "gpt_oss") return "gptoss";
  return name;
}

OllamaGraph ollama_graph_size(const OllamaGraphRequest& req) {
  const TransformerArch& a = req.arch;
  OllamaGraph g;
  // GraphSize multiplies the context by the parallel sequences first.
  const uint64_t context = checked_mul(req.num_ctx, req.num_parallel);
  const uint64_t batch = std::min(req.num_ctx, req.num_batch);
  const uint64_t embedding = a.hidden, heads = a.heads, heads_kv = a.resolved_kv_heads(), vocab = a.vocab;
  const uint64_t head_k = a.resolved_head_dim(), head_v = a.resolved_head_dim();
  const uint64_t embedding_heads = heads ? embedding / heads : 0;
  const double bpe = ollama_kv_bytes_per_element(req.flash_attn ? req.kv_type : "f16");

  // Every attention layer: context x (K + V head sizes) x KV heads x bytes per element.
  g.kv.assign(a.layers,
              static_cast<uint64_t>(static_cast<double>(context * (head_k + head_v) * heads_kv) * bpe));
  const std::string arch = req.weights ? ollama_arch_name(*req.weights, a) : a.model_type;
  const uint64_t B = batch, e = embedding, c = context, v = vocab;
  if (arch == "llama" || arch == "llama4") {
    g.family = "llama";
    g.full_offload = std::max(4 * B * (1 + 4 * e + c * (1 + heads)), 4 * B * (e + v));
    g.partial_offload = 4 * B * e + std::max(4 * B * (1 + e + std::max(c, e)) + e * e * 9 / 16 +
                                                 4 * c * (B * heads + embedding_heads * heads_kv),
                                             4 * B * (e + v) + e * v * 105 / 128);
    if (const GgufTensor* exps = ollama_find_tensor(req.weights, "blk.0.ffn_gate_exps.weight")) {
      // the Mixtral 8x22B case: three expert matrices
      const uint64_t ff = a.intermediate;  // feed_forward_length
      g.partial_offload = std::max(
          3 * exps->bytes + 4 * B * (2 * ff + heads_kv + e + c + embedding_heads * heads_kv),
          4 * (c * B * heads + c * embedding_heads * heads_kv + B * 1024 + embedding_heads * heads_kv * B));
    }
  } else if (arch == "gemma" || arch == "gemma2" || arch == "gemma3" || arch == "gemma3n") {
    g.family = "gemma";
    g.full_offload = std::max(4 * B * (e + v), 4 * B * (2 + c + c * heads + 2 * e + 2 * head_k * heads));
    g.partial_offload = std::max(4 * e * B + e * v * 105 / 128 + 4 * v * B,
                                 4 * B * (2 * e + 1 + 2 * head_k * heads + c + c * heads) +
                                     4 * head_k * c * 8 + e * head_k * heads * 9 / 16);
    if (arch == "gemma3n") {
      g.full_offload *= 4;
      g.partial_offload *= 4;
    }
  } else if (arch == "command-r") {
    g.family = "command-r";
    g.full_offload = std::max(4 * B * (e + v), 4 * B * (2 + 4 * e + c * (1 + heads)));
    g.partial_offload = std::max(4 * B * (e + v) + e * v * 105 / 128,
                                 4 * B * (1 + 2 * e + c * (1 + heads)) + 4 * e * c + e * e * 9 / 16);
  } else if (arch == "qwen2") {
    g.family = "qwen2";
    g.full_offload = std::max(4 * B * (e + v), 4 * B * (1 + 2 * e + c + c * heads));
    g.partial_offload =
        std::max(4 * B * (e + v) + e * v * 105 / 128, 4 * (B * (1 + 2 * e + c * (1 + heads)) + e * (1 + c)));
  } else if (arch == "phi2") {
    g.family = "phi2";
    g.full_offload = std::max(4 * B * (e + v), 4 * B * (1 + 4 * e + c + c * heads));
    g.partial_offload =
        std::max(4 * B * (2 * e + v) + e * v * 105 / 128, 4 * B * (2 + 3 * e + c + c * heads));
  } else if (arch == "stablelm") {
    g.family = "stablelm";
    g.full_offload = 4 * B * (c * (1 + heads) + 3 * e + 2);
    g.partial_offload = std::max(4 * B * (v + 2 * e), g.full_offload);
  } else {
    g.family = "default";
  }
  for (uint64_t x : g.kv) g.kv_total = checked_add(g.kv_total, x);
  // memory.go (and the llama engine's Load from v0.12.11): a case that sets no partial size
  // gets gqa x kv / 6, and full falls back to partial.
  if (g.partial_offload == 0) {
    const uint64_t gqa = heads / std::max<uint64_t>(heads_kv, 1);
    g.partial_offload = gqa * g.kv_total / 6;
  }
  if (g.full_offload == 0) g.full_offload = g.partial_offload;
  return g;
}

}  // namespace memplan
