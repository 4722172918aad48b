#pragma once
// How a transformer's weights and KV cache split across GPUs for inference, the way vLLM
// shards a model: tensor parallelism (tp) splits the attention heads, the MLP width and the
// vocabulary (vocab-parallel embedding and lm_head, padded to a multiple of 64); norms and
// biases stay replicated. KV heads per GPU = max(1, kv_heads / tp): with tp > kv_heads each
// KV head is replicated on tp / kv_heads GPUs. Pipeline parallelism (pp) gives each stage
// ceil(layers / pp) layers; the first stage holds the embedding, the last the lm_head.
#include <cstdint>
#include <optional>

#include <memplan/model.hpp>

namespace memplan {

// Parameters and cache shape of the most-loaded GPU of a tp x pp inference layout.
struct InferenceSplit {
  uint64_t tp = 1;
  uint64_t pp = 1;
  uint64_t parameters_per_gpu = 0;     // most-loaded GPU (== model.parameters at tp = pp = 1)
  uint64_t sharded_parameters = 0;     // split by tp: attention, MLP, embedding, lm_head (whole model)
  uint64_t replicated_parameters = 0;  // norms, biases, routers: copied on every tp rank
  uint64_t layers_per_gpu = 0;         // ceil(layers / pp)
  uint64_t kv_heads_per_gpu = 0;       // max(1, kv_heads / tp)
  uint64_t kv_replicas = 1;            // GPUs that hold the same KV head (tp / kv_heads when tp > kv_heads)
  uint64_t heads_per_gpu = 0;          // heads / tp
  uint64_t intermediate_per_gpu = 0;   // MLP width / tp
  uint64_t vocab_per_gpu = 0;          // padded vocabulary / tp
};

// The split of `model` (which needs an architecture) over tp x pp GPUs. Error when tp does not
// divide the attention heads or the MLP width, as vLLM requires, or pp exceeds the layers.
InferenceSplit inference_split(const ModelSpec& model, uint64_t tp, uint64_t pp);

// `bytes` (the whole model's weights) scaled to the most-loaded GPU of `split`.
uint64_t weight_bytes_per_gpu(uint64_t bytes, uint64_t parameters, const InferenceSplit& split);

// vLLM pads the vocabulary of VocabParallelEmbedding / ParallelLMHead to a multiple of 64.
inline constexpr uint64_t k_vocab_padding = 64;

}  // namespace memplan

namespace memplan {
struct EstimateRequest;
struct Estimate;
// Inference on several GPUs (--mode infer with --tp/--pp): the single-GPU terms of `e` become
// the most-loaded GPU's: weights split as above, the KV cache with kv_heads_per_gpu heads of
// layers_per_gpu layers, the prefill working buffer with the split widths (the residual stream
// is whole on every GPU: the all-reduce works in place on it). Error for ZeRO/FSDP/offload.
void apply_inference_layout(const EstimateRequest& r, Estimate& e);
// --gpus auto for inference: the smallest tensor-parallel size (1, 2, 4, ... 64, dividing the
// heads) whose most-loaded GPU fits `memory`; nullopt when none does.
std::optional<EstimateRequest> smallest_inference_layout(const EstimateRequest& r, uint64_t memory);
}  // namespace memplan
