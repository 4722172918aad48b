#pragma once
// What to change when a run does not fit a GPU, cheapest first (the lesson's playbook):
// tier 1 changes the run, not the model (micro-batch + gradient accumulation, autocast);
// tier 2 changes the computation, the data or the model (checkpointing, then a shorter sequence,
// 8-bit or factored optimizer state, LoRA, QLoRA, sharding over N GPUs, CPU offload); tier 3 is the
// smallest preset GPU that fits as is. Each change comes with its new required memory, its
// verdict on the GPU and what it costs; then the cheapest combinations of 2-3 changes that
// first make the run fit, found by a bounded breadth-first search over the knob table.
// Tier 0 (retained graphs, loss.item(), no_grad, restarting) costs nothing and no estimate can
// see it: tier0_checklist().

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <memplan/estimate.hpp>
#include <memplan/fit.hpp>
#include <memplan/gpu.hpp>
#include <memplan/lora.hpp>

namespace memplan {

// The knobs of the playbook; advice_knob_name() gives their identifiers.
enum class AdviceKnob {
  micro_batch,
  autocast,
  sequence,
  checkpointing,
  optimizer_8bit,
  adafactor,
  lora,
  qlora,
  sharding,
  offload,
  gpu,
  quantize,       // inference: a llama.cpp file type for the weights
  kv_quantize,    // inference: a q8_0 / q4_0 KV cache
  layer_offload,  // inference: llama.cpp -ngl, the other layers in host memory
  // inference: the model split over tp GPUs (vllm serve --tensor-parallel-size)
  tensor_parallel,
};

// "micro-batch", "autocast", "sequence", "checkpointing", "optimizer-8bit", "adafactor", "lora",
// "qlora", "sharding", "offload", "gpu", "quantize", "kv-quantize", "layer-offload",
// "tensor-parallel".
const char* advice_knob_name(AdviceKnob k);

// What goes with a change (BatchNorm, GradScaler, ...); the fields a code uses are named beside it.
enum class AdviceNoteCode {
  accumulation_divides_loss,   // count: accumulation steps
  effective_batch_differs,     // count: the effective batch, other: the batch asked
  batchnorm_micro_batch,       // the model has BatchNorm
  autocast_forward_only,       // put autocast around the forward pass
  no_bf16_hardware,            // gpu: the card without bf16 (amp-fp16 with a GradScaler)
  sequence_floor,              // count: the shortest sequence tried, other: the sequence asked
  checkpointing_how,           // how to turn checkpointing on
  lora_peft,                   // count: rank, targets: the target modules
  fp16_adapters_loss_scaling,  // fp16 adapters need a GradScaler
  sharding_activations,        // activations are not sharded
  unified_memory,              // gpu: the unified-memory GPU (its budget note)
};

struct AdviceNote {
  AdviceNoteCode code = AdviceNoteCode::batchnorm_micro_batch;
  uint64_t count = 0;
  uint64_t other = 0;
  std::string gpu;      // a GPU id
  std::string targets;  // LoRA target modules, "q_proj,v_proj"

  bool operator==(const AdviceNote& o) const {
    return code == o.code && count == o.count && other == o.other && gpu == o.gpu && targets == o.targets;
  }
};

// One setting of one knob: what changes (the new setting's numbers) and what it costs the user
// (the knob, its tier and rank; the renderer words both). A knob uses the fields named beside it.
struct AdviceChange {
  AdviceKnob knob = AdviceKnob::micro_batch;
  int tier = 1;
  int cost_rank = 0;         // orders suggestions: lower is cheaper; a combination sums its changes
  Mode mode = Mode::train;   // micro-batch, sequence: the run's mode
  uint64_t batch = 0;        // micro-batch: the new batch (inference) or micro-batch (training)
  uint64_t steps = 0;        // micro-batch: accumulation steps (training)
  uint64_t seq = 0;          // sequence: the new length
  uint64_t was = 0;          // sequence: the length asked
  bool bf16 = false;         // autocast, lora, qlora: the half format is bf16, else fp16
  bool frozen_half = false;  // lora: frozen weights loaded in the half format
  std::string recipe;        // qlora: the adapters' new recipe ("" unchanged)
  Checkpointing checkpointing = Checkpointing::none;  // checkpointing
  uint64_t lora_rank = 0;                             // lora, qlora
  uint64_t lora_parameters = 0;                       // lora, qlora: trainable adapter parameters
  double lora_share = 0;                              // lora, qlora: adapter parameters / model parameters
  std::string lora_targets;                           // lora, qlora: "q_proj,v_proj"
  uint64_t gpus = 0;                                  // sharding, offload: the GPU count
  bool found = true;  // sharding: the count fits (else the largest tried); gpu: a GPU fits
  ShardingStrategy sharding = ShardingStrategy::zero3;  // sharding, offload
  Offload offload = Offload::none;                      // offload: what moves to the host
  uint64_t host_bytes = 0;                              // offload: host memory per node
  std::string gpu;         // sharding: the GPU; gpu: the bigger GPU (or the largest)
  uint64_t gpu_bytes = 0;  // gpu: its usable memory
  std::string format;  // quantize, kv_quantize: the format ("q4_k_m", "q8_0"); layer_offload: the weights'
  std::vector<AdviceNote> notes;
};

// A suggestion: one change, or a combination of 2-3, and the run it gives.
struct Suggestion {
  int tier = 1;                       // the highest tier among its changes
  std::vector<AdviceChange> changes;  // in the order they were applied
  int cost_rank = 0;                  // sum of the changes' ranks
  EstimateRequest request;            // the changed run (per GPU)
  uint64_t required_bytes = 0;        // on the most-loaded GPU, overhead included
  uint64_t memory_bytes = 0;          // usable memory of the GPU it is judged against
  std::string gpu;                    // that GPU's id (tier 3: the bigger GPU)
  uint64_t gpus = 1;                  // how many of it (sharding)
  uint64_t host_bytes = 0;            // moved to host memory (offload), per node
  Verdict verdict = Verdict::no;

  bool fits() const { return verdict != Verdict::no; }
};

// Bounds on the search, so that advice stays fast (each estimate is microseconds).
struct AdviceOptions {
  std::size_t max_knobs = 3;          // largest combination
  std::size_t max_candidates = 2000;  // knob chains evaluated in the combination search, at most
  uint64_t max_shard_gpus = 64;       // sharding: largest GPU count tried
  uint64_t lora_rank = 16;            // LoRA/QLoRA rank
};

struct Advice {
  EstimateRequest request;      // the run as given
  GpuSpec gpu;                  // the GPU advised for
  uint64_t required_bytes = 0;  // as given
  uint64_t memory_bytes = 0;    // usable memory of the GPU
  int64_t spare_bytes = 0;      // negative: shortfall
  Verdict verdict = Verdict::no;
  std::vector<Suggestion> singles;         // one per knob that saves memory, by tier then cost; tier 3 last
  std::vector<Suggestion> combinations;    // fitting, none with a fitting subset, by total cost
  std::size_t candidates_tried = 0;        // knob chains evaluated by the combination search
  bool search_capped = false;              // the search stopped at max_candidates
  std::vector<FitWarning> hardware_notes;  // the recipe on this GPU, unified memory, ...

  bool fits() const { return verdict != Verdict::no; }
};

// Advice for running `request` on `gpu`; `presets` are the GPUs tier 3 may name (Apple
// unified-memory entries only when nothing else fits). Throws Error when the request cannot be
// estimated. When the run already fits, singles and combinations are still computed (callers
// show them on request).
Advice advise(const EstimateRequest& request, const GpuSpec& gpu, const std::vector<GpuSpec>& presets,
              const AdviceOptions& options = {});

// The cheapest change that makes `request` fit `gpu` when it does not: the single change of lowest
// (tier, cost) that fits, found without running the knobs that cannot beat it; else advise()'s cheapest
// combination; else a bigger preset GPU. nullopt when the run fits or nothing does.
std::optional<Suggestion> cheapest_fit(const EstimateRequest& request, const GpuSpec& gpu,
                                       const std::vector<GpuSpec>& presets,
                                       const AdviceOptions& options = {});

// LoRA adapters of rank r on the attention's q and v projections (fused q/k/v where the model
// fuses them): lora_adapters(model, LoraTargets{rank, q, v}).
LoraAdapters lora_adapters(const ModelSpec& model, uint64_t rank);

}  // namespace memplan
