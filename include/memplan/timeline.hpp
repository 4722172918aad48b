#pragma once
// The step timeline: allocated memory through one training step, phase by phase, and its peak.
// The terms of the estimate are what exists; the timeline is when it exists: gradients appear
// while saved activations are freed, optimizer state is allocated on the first step, and the
// loss and the optimizer make transient buffers. Plain values: the renderer words them.

#include <array>
#include <cstdint>
#include <string_view>

namespace memplan {

// What runs the step; it decides a few saved tensors and the optimizer's temporaries.
//   cuda: torch >= 2 on a GPU (fused dropout masks of 1 byte, sdpa kernels, foreach AdamW).
//   cpu:  torch 1.13 on CPU (Debian's python3-torch), measured in tests/data/: dropout masks in
//         the input's dtype, sdpa as its math path, the per-tensor AdamW loop.
enum class Device { cuda, cpu };

// How the optimizer walks the tensors: foreach (torch >= 2's default on CUDA: each operation over
// every tensor at once), per-tensor (torch 1.13, transformers.AdamW, foreach=False: one tensor at
// a time) or fused (fused=True, transformers' adamw_torch_fused: torch._fused_adamw_ updates
// parameters and state in place in one kernel, no temporaries). Unset: foreach on cuda, per-tensor
// on cpu.
enum class OptimizerLoop { device_default, foreach, per_tensor, fused };

// "cuda" (also "gpu") / "cpu", case-insensitive, else Error naming `subject`.
Device parse_device(std::string_view subject, std::string_view text);
const char* to_string(Device d);

// The phases of a step, in order. Each point is the most allocated during that phase.
enum class Phase : uint8_t { weights, forward, loss, backward, optimizer, zero_grad };
inline constexpr size_t k_phases = 6;
const char* to_string(Phase p);  // "weights", "forward", ... (JSON keys too)

// One phase: what is alive at its high point, split so that each byte has a name.
struct PhasePoint {
  Phase phase = Phase::weights;
  uint64_t weights = 0;          // parameters
  uint64_t optimizer_state = 0;  // alive from the first optimizer step on
  uint64_t gradients = 0;        // alive between backward and zero_grad (and across micro-batches)
  uint64_t activations = 0;      // saved for backward, and what the loss holds
  uint64_t transient = 0;        // the phase's own temporaries (loss gradients, optimizer temporaries)
  uint64_t workspace = 0;        // cuBLAS workspaces torch's allocator holds (cuda only)
  uint64_t buffers = 0;          // a layout's buffers (DDP's gradient buckets, ZeRO-3/FSDP gathered layers)
  uint64_t bytes = 0;            // the sum
};

// Why a transient has its size (the renderer words it).
enum class TransientCode : uint8_t {
  none,
  loss_gradients,     // n0 elements (batch x seq x vocab, or the output) x n1 B, x 2 (nll and log-softmax)
  foreach_copy,       // torch foreach AdamW: one copy of n0 trainable numbers x n1 B (sqrt of exp_avg_sq)
  per_tensor_copies,  // torch 1.13 per-tensor AdamW: 2 x the largest tensor, n0 numbers x n1 B
  mlp_gradients,      // the last layer's backward: n0 tokens x (n1 MLP width + hidden) gradients
  // The LM head's backward under Lit-GPT's bitsandbytes 4-bit layers: cross-entropy's two gradients
  // of n0 B each, and the head's weight (n1 elements) dequantised to fp16 and cast to bf16 (4 B each).
  loss_and_dequant,
  // transformers' Adafactor, one tensor at a time (src/core/memory/adafactor_step.hpp): k fp32
  // tensors of n0 numbers (the update and its successor; k = 4 with half weights: + the fp32 copies of
  // the gradient and the weight) + n1 numbers (the previous tensor's update, or the factors), 4 B
  // each; k = (bytes / 4 - n1) / n0.
  adafactor_update,
  // transformers.AdamW, one tensor at a time (core/memory/optimizer_loop.hpp): denom =
  // exp_avg_sq.sqrt() of the tensor (n0 numbers) beside the previous tensor's (n1), in the state's
  // format; bytes / (n0 + n1) bytes each.
  hf_adamw_denom,
  // Autocast's weight cache under full checkpointing (src/core/memory/activation_term.hpp): the half
  // copies of n0 layers' weights, n1 B each, alive from the forward through the loss.
  autocast_weight_cache,
  // TRL's fused LM head's backward (Loss::logprob, compute.hpp): the fp32 gradient of its input (n0
  // B), its reused tile of 4096 tokens x 32768 vocabulary and, under autocast, the weight slice cast
  // for it (n1 B), and where the head trains its fp32 weight gradient (the rest).
  logprob_backward,
  // The last layer's backward with bitsandbytes 4-bit MLP weights (QLoRA): its gradients (n0 B, as
  // mlp_gradients) while MatMul4Bit.backward dequantises the down projection's weight (n1
  // elements, 2 B each: the half format it was quantised from) for its input's gradient.
  mlp_gradients_dequant,
  // Loading 4-bit weights (core/memory/weight_load.hpp): the weights loaded so far beside one
  // weight's 16-bit copy on the GPU (n0 elements x n1 B, the largest quantised weight's), the
  // copy the loader quantises from.
  load_staging,
};

struct Transient {
  TransientCode code = TransientCode::none;
  uint64_t n[2] = {0, 0};
  uint64_t bytes = 0;
};

// torch allocates one cuBLAS workspace per (handle, stream) from its caching allocator, so
// max_memory_allocated counts it: one for the thread running the forward, one for autograd's
// device thread. Its default size is 32 MiB on compute capability 9.0 and newer (4096 KiB x 8,
// CUBLAS_WORKSPACE_CONFIG) and 8 MiB + 128 KiB before; the peak does not depend on the GPU, so the
// larger is counted. Seen on an H200 (torch 2.11): two 32 MiB blocks, forward and backward.
inline constexpr uint64_t k_cublas_workspace_bytes = 32ull << 20;
inline constexpr uint64_t k_cublas_workspaces = 2;

// What torch's CUDA caching allocator reserves for the step's tensors: the step replayed tensor by
// tensor (src/core/memory/step_events.*) through the allocator's rules (caching_allocator.*), steps 1
// to 3. torch.cuda.max_memory_reserved(); nvidia-smi shows it plus the CUDA context.
struct ReservedPeak {
  bool present = false;
  bool expandable_segments = false;       // PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  uint64_t requested_peak = 0;            // most requested bytes alive at once (== the timeline's peak)
  uint64_t allocated_peak = 0;            // the same in 512-byte-rounded blocks (max_memory_allocated)
  uint64_t reserved_peak = 0;             // max_memory_reserved
  uint64_t segments = 0;                  // segments held at the end (cudaMalloc calls not released)
  uint64_t tensors = 0;                   // allocations replayed
  Phase reserved_phase = Phase::weights;  // the phase in which reserved last grew
  uint8_t reserved_step = 0;              // and its step (1-based)
  uint8_t steps = 0;                      // steps replayed
};

struct StepTimeline {
  bool present = false;  // training with an activation model, on one GPU or data parallel (tp = pp = 1)
  Device device = Device::cuda;
  std::array<PhasePoint, k_phases> phases{};
  Transient forward_transient;  // alive at the end of the forward and through the loss
  Transient backward_transient;
  Transient optimizer_transient;
  uint64_t peak_bytes = 0;
  Phase peak_phase = Phase::weights;
  uint64_t first_step_peak_bytes = 0;  // step 1: no optimizer state before optimizer.step()
  // Loading the weights before step 1, where the loader makes temporaries (a QLoRA load's 16-bit
  // copies): its high point (0 when the weights are loaded as they stay), the largest copy, and
  // transformers' warm-up block (freed at once, its segment kept by the allocator).
  uint64_t load_peak_bytes = 0;
  Transient load_transient;
  uint64_t load_warmup_bytes = 0;
  bool peak_at_load = false;  // the load's high point is the peak
  ReservedPeak reserved;      // cuda only

  const PhasePoint& at(Phase p) const { return phases[static_cast<size_t>(p)]; }
};

}  // namespace memplan
