#pragma once
// llama.cpp (and Ollama, which runs it) on GPUs: where each tensor goes for -ngl N layers
// offloaded, the KV cache of each layer for the cache types, the compute buffer, the largest -ngl
// that fits, the split over several GPUs (llama.cpp tensor_split) and n_cpu_moe for MoE models.
// Rules from llama.cpp's llama-model.cpp (layer placement), llama-kv-cache.cpp (one K and one V
// row of n_embd_k_gqa per cell and layer; MLA: the K row alone), llama-kv-cache-iswa.cpp (window
// layers in their own, smaller cache) and the graph reservation in llama-context.cpp.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <memplan/model.hpp>
#include "core/models/gguf.hpp"

namespace memplan {

struct LlamaCppRequest {
  GgufFile weights;             // the tensors (a real GGUF's, or gguf_of_arch's)
  TransformerArch arch;         // layers, heads, kv heads, head size, vocabulary
  uint64_t n_ctx = 4096;        // -c
  uint64_t n_ubatch = 512;      // -ub: tokens per graph evaluation
  std::string cache_k = "F16";  // llama.cpp type_k, a ggml type name
  std::string cache_v = "F16";  // type_v
  bool flash_attn = false;      // -fa
  bool swa_full = false;        // --swa-full: window layers get n_ctx cells too
  uint64_t n_seq = 1;           // n_seq_max: the sequences (llama-server -np)
  bool kv_unified = true;
  uint64_t n_outputs = 0;  // n_outputs_max: output rows reserved (0: every token of -ub)       // one cache
                           // for all sequences; false: one stream of n_ctx / n_seq each
  std::optional<uint64_t> n_gpu_layers;  // -ngl; none: the largest that fits
  std::vector<uint64_t> gpu_bytes;       // memory of each GPU
  std::vector<double> tensor_split;      // -ts; empty: in proportion to gpu_bytes
  uint64_t n_cpu_moe = 0;                // n_cpu_moe: expert tensors of the first N layers stay on the CPU
  uint64_t mmproj_bytes = 0;             // the multimodal projector's tensors (on GPU 0)
  uint64_t reserve_bytes = 0;            // per GPU: CUDA context and what else is not llama.cpp's buffers
  bool op_offload = true;                // llama.cpp's default; --no-op-offload turns it off
  bool output_first = true;              // -ngl gives the output layer first (llama.cpp PR 18148 on)
  uint64_t sched_max_copies = 4;         // GGML_SCHED_MAX_COPIES of the build (CMake default 4)
};

struct LlamaCppDevice {
  uint64_t model = 0, kv = 0, compute = 0, projector = 0, reserve = 0;
  uint64_t layers = 0;  // repeating layers held
  bool output = false;  // holds the output layer
  uint64_t total() const { return model + kv + compute + projector + reserve; }
};

struct LlamaCppPlan {
  uint64_t n_layers = 0;
  uint64_t n_gpu_layers = 0;  // as -ngl counts: the repeating layers plus 1 for the output layer
  uint64_t n_ctx_cells = 0;   // n_ctx padded to the cache's 256 cells
  std::vector<LlamaCppDevice> gpus;
  LlamaCppDevice host;                              // CPU / CUDA_Host: token embeddings, CPU layers, their KV
  std::vector<uint64_t> layer_bytes;                // each repeating layer's tensors
  uint64_t token_embd_bytes = 0, output_bytes = 0;  // output.weight + output_norm
  uint64_t kv_layer_bytes = 0;                      // K + V of one full-attention layer for n_ctx cells
  uint64_t kv_k_layer_bytes = 0;
  uint64_t n_swa_cells = 0;         // cells of the window layers' cache (0: no separate SWA cache)
  uint64_t kv_swa_layer_bytes = 0;  // K + V of one window layer for n_swa_cells
  std::vector<bool> swa_layers;     // which layers use the window cache
  uint64_t compute_attention = 0, compute_output = 0;  // the two stages of the compute buffer
  uint64_t compute_mask = 0;  // the KQ mask [n_kv, pad64(T)] (f16 with FA, else f32), one per GPU
  // What the host's share of the graph adds on GPU 0 (0 when it adds nothing): ggml_backend_sched
  // gives an op whose weight is in host memory to the first GPU when the GPU backend's offload_op
  // wants it (ggml-cuda.cu: 32 tokens or more, never GET_ROWS), copying the weight into the split's
  // inputs, in the GPU's compute buffer; a split ends before each further host weight, so one weight
  // copy is live at a time (ggml-backend.cpp ggml_backend_sched_split_graph, pass 5).
  uint64_t compute_host_attention = 0;  // a host layer's attention stage with its K and V copied in
  uint64_t compute_host_weight = 0;     // the largest host weight's product (CPU layers, n_cpu_moe experts)
  uint64_t compute_host_output = 0;     // the output stage with the output matrix copied in
  // Pipeline parallelism (llama-context.cpp: several GPUs, every layer and the output on them, layer
  // split, KV offloaded, no tensor overrides): the scheduler keeps GGML_SCHED_MAX_COPIES (4) copies
  // of each split input on its GPU for the whole graph.
  uint64_t pipeline_copies = 1;
  uint64_t compute_pipeline_extra = 0;  // on a GPU with layers: 3 more masks and 4 received hidden states
  bool pipeline_retried = false;        // the pipeline's buffers did not fit: reserved again with one copy
  bool fits = true;
  std::vector<bool> gpu_fits;
};

// The plan for req.n_gpu_layers (or, when unset, for the largest that fits: when even 0 does not
// fit, the plan at 0 with fits = false).
LlamaCppPlan plan_llamacpp(const LlamaCppRequest& req);

// Whether llama.cpp runs this plan with pipeline parallelism (llama_context: n_devices > 1,
// n_gpu_layers > n_layer, split mode layer, offload_kqv, no tensor overrides such as n_cpu_moe).
bool llamacpp_pipeline_parallel(const LlamaCppRequest& req, const LlamaCppPlan& plan);

// The largest -ngl (0 ... layers + 1) whose plan fits; nullopt when none does.
std::optional<uint64_t> largest_ngl(const LlamaCppRequest& req);

// The layers llama.cpp gives a sliding (or chunked) window, as llama_hparams::set_swa_pattern
// does: in each run of `pattern` layers all but the last are window layers, pattern being the
// one that gives `arch.window_layers` of them (Gemma 2 and gpt-oss 2, Cohere 2 and Llama 4 4,
// Gemma 3 6). Empty when every layer or none is windowed: llama.cpp then keeps one cache of
// n_ctx cells (its llama and phi3 models do not implement Mistral's or Phi-3's window).
std::vector<bool> llamacpp_swa_layers(const TransformerArch& arch);

// Bytes per cache row of `n` elements of the ggml type named `type` (F16, Q8_0, Q4_0, ...).
uint64_t ggml_row_bytes(const std::string& type, uint64_t n);

}  // namespace memplan
