#pragma once
// What to change when a run does not fit a GPU, cheapest first (the lesson's playbook):
// tier 1 changes the run, not the model (micro-batch + gradient accumulation, autocast, a
// shorter sequence); tier 2 changes the computation or the model (checkpointing, 8-bit or
// factored optimizer state, LoRA, QLoRA, sharding over N GPUs, CPU offload); tier 3 is the
// smallest preset GPU that fits as is. Each change comes with its new required memory, its
// verdict on the GPU and what it costs; then the cheapest combinations of 2-3 changes that
// first make the run fit, found by a bounded breadth-first search over the knob table.
// Tier 0 (retained graphs, loss.item(), no_grad, restarting) costs nothing and no estimate can
// see it: tier0_checklist().

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <memplan/estimate.hpp>
#include <memplan/fit.hpp>
#include <memplan/gpu.hpp>
#include <memplan/lora.hpp>

namespace memplan {

// One setting of one knob: what changes and what it costs the user.
struct AdviceChange {
  std::string knob;    // "micro-batch", "autocast", "sequence", "checkpointing", "optimizer-8bit",
                       // "adafactor", "lora", "qlora", "sharding", "offload", "gpu"
  std::string change;  // "micro-batch 4 x 4 accumulation steps (effective batch 16)"
  std::string cost;    // "x4 accumulation steps: same effective batch, more steps"
  int tier = 1;
  int cost_rank = 0;               // orders suggestions: lower is cheaper; a combination sums its changes
  std::vector<std::string> notes;  // warnings that go with the change (BatchNorm, GradScaler, ...)
};

// A suggestion: one change, or a combination of 2-3, and the run it gives.
struct Suggestion {
  int tier = 1;                       // the highest tier among its changes
  std::vector<AdviceChange> changes;  // in the order they were applied
  std::string change;                 // the changes joined with " + "
  std::string cost;                   // their costs joined with "; "
  int cost_rank = 0;                  // sum of the changes' ranks
  EstimateRequest request;            // the changed run (per GPU)
  uint64_t required_bytes = 0;        // on the most-loaded GPU, overhead included
  uint64_t memory_bytes = 0;          // usable memory of the GPU it is judged against
  std::string gpu;                    // that GPU's id (tier 3: the bigger GPU)
  uint64_t gpus = 1;                  // how many of it (sharding)
  uint64_t host_bytes = 0;            // moved to host memory (offload), per node
  Verdict verdict = Verdict::no;
  std::vector<std::string> notes;  // the changes' notes

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
  std::vector<Suggestion> singles;          // one per knob that saves memory, by tier then cost; tier 3 last
  std::vector<Suggestion> combinations;     // fitting, none with a fitting subset, by total cost
  std::size_t candidates_tried = 0;         // knob chains evaluated by the combination search
  bool search_capped = false;               // the search stopped at max_candidates
  std::vector<std::string> hardware_notes;  // the recipe on this GPU, unified memory, ...

  bool fits() const { return verdict != Verdict::no; }
};

// Advice for running `request` on `gpu`; `presets` are the GPUs tier 3 may name (Apple
// unified-memory entries only when nothing else fits). Throws Error when the request cannot be
// estimated. When the run already fits, singles and combinations are still computed (callers
// show them on request).
Advice advise(const EstimateRequest& request, const GpuSpec& gpu, const std::vector<GpuSpec>& presets,
              const AdviceOptions& options = {});

// LoRA adapters of rank r on the attention's q and v projections (fused q/k/v where the model
// fuses them): lora_adapters(model, LoraTargets{rank, q, v}).
LoraAdapters lora_adapters(const ModelSpec& model, uint64_t rank);

// Tier 0 of the playbook: free fixes no estimate can see, one line each.
const std::vector<std::string>& tier0_checklist();

}  // namespace memplan
