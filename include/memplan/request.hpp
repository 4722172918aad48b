#pragma once
// What to estimate: the model, the precision recipe, the optimizer, the run and the layout,
// every value already parsed and checked (the CLI's flags and plan files resolve into this).

#include <cstdint>
#include <optional>
#include <string>

#include <memplan/bitsandbytes_release.hpp>
#include <memplan/compute.hpp>
#include <memplan/cuda_runtime.hpp>
#include <memplan/framework.hpp>
#include <memplan/lora.hpp>
#include <memplan/model.hpp>
#include <memplan/optimizer.hpp>
#include <memplan/recipe.hpp>
#include <memplan/sharding.hpp>
#include <memplan/storage_format.hpp>
#include <memplan/timeline.hpp>
#include <memplan/torch_release.hpp>
#include <memplan/transformers_release.hpp>

namespace memplan {

enum class Mode { train, infer };

// The overhead of a request not resolved against a GPU: the CUDA context measured on an H200
// (cuda_runtime.hpp), 718,077,952 B. The CLI replaces it by the context predicted for each GPU.
inline constexpr uint64_t k_default_overhead_bytes = k_measured_context_bytes;
// vLLM's max_num_batched_tokens for its OpenAI server (V1 engine, 0.8) and llama.cpp's n_batch.
inline constexpr uint64_t k_default_prefill_chunk = 2048;

// What to compute (the CLI's flags, resolved).
struct EstimateRequest {
  ModelSpec model;
  Recipe recipe;
  Optimizer optimizer;
  Mode mode = Mode::train;
  double trainable = 1.0;                   // share of parameters trained (LoRA: ~0.002)
  std::optional<StorageFormatId> quantize;  // frozen-weight format (nf4, int8, ...); none = the recipe's
  uint64_t batch = 1;                       // micro-batch
  uint64_t seq = 0;                         // sequence length (0 = not given)
  uint64_t activation_bytes_per_row = 0;    // --activation-bytes-per-row (0 = not given)
  Attention attention = Attention::sdpa;    // sdpa: fused, PyTorch 2's default
  Checkpointing checkpointing = Checkpointing::none;
  std::optional<StorageFormatId> kv_format;  // KV-cache format for inference (none = activation format)
  // The per-process overhead outside torch's allocator. overhead_given (--overhead): this figure on
  // every GPU; else the fit uses the CUDA context predicted for each GPU under `cuda` (fit.hpp's
  // overhead_on), and overhead_bytes is the largest of the GPUs compared (the breakdown's figure).
  uint64_t overhead_bytes = k_default_overhead_bytes;
  bool overhead_given = false;
  CudaRuntime cuda;    // CUDA version and module loading (--cuda, --cuda-module-loading)
  TorchRelease torch;  // the PyTorch release of the step (--torch; torch_release.hpp)
  // The transformers release whose modelling code runs (--transformers; transformers_release.hpp).
  TransformersRelease transformers;
  // The bitsandbytes release whose 4-bit layers run a QLoRA step (--bitsandbytes).
  BitsandbytesRelease bitsandbytes;
  bool stored_weights = false;  // inference: weights cost model.weight_bytes, as stored in the file
  std::optional<ParallelLayout> parallel;     // several GPUs: report the most-loaded one
  GradFormat grad_format = GradFormat::half;  // gradient buffers of mixed recipes (16/18/20 B per parameter)
  uint64_t largest_layer = 0;                 // --largest-layer: ZeRO-3/FSDP gathered unit (0 = derive)
  // --lora R: adapters on these matrices are the trainable parameters (already counted in
  // model.parameters; trainable = their share); every base weight is frozen.
  std::optional<LoraTargets> lora;
  // A llama.cpp file type (LLAMA_FTYPE id: q4_k_m = 15): the weights are the tensors
  // llama-quantize writes for the model (model.weight_bytes, stored_weights).
  std::optional<uint32_t> llama_ftype;
  // Vision-language models: images per sequence, each model.image_tokens language-model tokens
  // (added to seq for activations and the KV cache); image_size as given (0 = the model's own).
  uint64_t images = 0;
  uint64_t image_size = 0;
  Device device = Device::cuda;  // what runs the step (timeline.hpp): torch 2 on CUDA, or torch 1.13 on CPU
  Loss loss = Loss::plain;       // causal LMs: plain, chunked or fused cross-entropy (compute.hpp)
  // The training loop keeps the model's output (the logits) alive through backward and the
  // optimizer step (`logits = model(x); loss = f(logits); loss.backward()`, nanoGPT, Lit-GPT);
  // false: it keeps only the loss (Hugging Face's Trainer), so the logits go before backward.
  bool keep_logits = false;
  uint64_t grad_accum = 1;  // micro-batches per optimizer step: gradients alive across them
  bool grads_kept = false;  // zero_grad() keeps the gradients (set_to_none=False, torch < 2's default)
  OptimizerLoop optimizer_loop = OptimizerLoop::device_default;  // foreach or per-tensor temporaries
  // Inference: tokens one prefill forward pass takes (a serving engine's chunk: vLLM's
  // max_num_batched_tokens, llama.cpp's n_batch); the working buffer covers this many tokens,
  // not the whole batch at once. 0 = the whole batch in one pass.
  uint64_t prefill_chunk = k_default_prefill_chunk;
  // Inference: the forward returns every position's logits (transformers' model(input_ids) with its
  // default logits_to_keep=0: scoring, perplexity, prompt logprobs) instead of the last position's
  // of each sequence (generation: transformers' generate() passes logits_to_keep=1, the engines).
  bool all_logits = false;
  // Whose code runs the step where it keeps more than torch decides (framework.hpp): hf (default)
  // or Lit-GPT 8641822 on Fabric 2.1 / torch 2.1.
  Framework framework = Framework::hf;
  // Full checkpointing keeps each layer's input on the host but the last one's (unsloth's
  // checkpointing: framework_profile.hpp); on the GPU, that input and two reload buffers.
  bool offloaded_checkpoints = false;
  // Vision-language training: the vision tower's weights train too (its layers keep their
  // activations); false: frozen, as LLaVA's and LoRA recipes leave it (vision_activations.hpp).
  bool train_vision = false;
  // PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (torch >= 2.1): the caching allocator grows one
  // segment per pool instead of one cudaMalloc per miss (caching_allocator.hpp).
  bool expandable_segments = false;
  // Searches (max-batch, max-seq) pass their memory: a step whose allocated peak + overhead already
  // exceeds it is not replayed through the caching allocator, since reserved is never below the
  // allocated peak and the verdict is "no" either way; its required_bytes() is then the allocated
  // peak + overhead, a lower bound. A step that is replayed stops once its reserved bytes + overhead
  // pass it (the same verdict; required_bytes() is then the reserved peak so far + overhead, a lower
  // bound above it). 0 replays nothing (callers that want only the terms' sum).
  uint64_t replay_below = UINT64_MAX;

  // LoRA adapters kept in fp32 on a half-precision model (peft's default, --lora-dtype fp32): their
  // weights, gradients and optimizer state are fp32 whatever the recipe's formats.
  bool fp32_lora_adapters() const {
    return lora && lora->fp32_adapters && mode == Mode::train && !recipe.has_master() &&
           !(recipe.weights.cost == ElementCost{4, 1});
  }
};

}  // namespace memplan
