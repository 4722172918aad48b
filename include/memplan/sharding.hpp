#pragma once
// Memory of a training step spread over many GPUs: data-parallel sharding (DeepSpeed ZeRO 0-3,
// PyTorch FSDP, Megatron's distributed optimizer), CPU offload, and Megatron-style tensor,
// sequence and pipeline parallelism. Pure functions on plain inputs; the CLI builds the request.
// Formulas, engines and versions: docs/sharding.md.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <memplan/compute.hpp>

#include <memplan/model.hpp>
#include <memplan/storage_format.hpp>

namespace memplan {

// How data-parallel ranks split the model states. --zero N / --fsdp STRATEGY.
enum class ShardingStrategy {
  ddp,                 // plain data parallel: every rank holds everything
  zero0,               // DeepSpeed ZeRO stage 0 (= ddp)
  zero1,               // optimizer state + fp32 master copy (Megatron's distributed optimizer too)
  zero2,               // + gradients
  zero3,               // + parameters (gathered layer by layer)
  fsdp_no_shard,       // FSDP NO_SHARD (= ddp)
  fsdp_shard_grad_op,  // FSDP SHARD_GRAD_OP (= ZeRO-2; parameters unsharded from forward to backward)
  fsdp_full_shard,     // FSDP FULL_SHARD (= ZeRO-3)
  fsdp_hybrid_shard,   // FSDP HYBRID_SHARD: FULL_SHARD inside a node, replicated across nodes
};

// What moves to host memory. --offload none|optimizer|parameters.
enum class Offload {
  none,
  optimizer,   // master weights, optimizer state, fp32 gradient partitions (ZeRO-Offload)
  parameters,  // also the parameter and gradient shards (ZeRO-Infinity offload_param, FSDP CPUOffload)
};

// How gradients are kept; where engines disagree on 16 vs 18 (vs 20) bytes per parameter.
// --grad-format half|fp32|half+fp32.
enum class GradFormat {
  half,          // half-precision gradients only: 2+2+12 = 16 B (ZeRO paper, DeepSpeed docs)
  fp32,          // fp32 gradient buffer: 2+4+12 = 18 B (Megatron bf16 main_grad, DeepSpeed ZeRO-3 estimator)
  half_and_fp32  // half gradients + fp32 copy for the step: 2+2+4+12 = 20 B (DeepSpeed ZeRO-2
                 // estimator since PR #5099, Megatron fp16)
};

// Bytes per parameter of each model-state term, as an engine keeps them.
struct ModelStateBytes {
  ElementCost weight{2, 1};           // working weights read by forward/backward
  ElementCost gradient{2, 1};         // gradient buffer written by backward
  ElementCost master_gradient{0, 1};  // fp32 gradient copy the optimizer steps on (0: none)
  ElementCost master_weight{4, 1};    // fp32 master weights (0: none)
  ElementCost optimizer_state{8, 1};  // optimizer state per trainable parameter (Adam fp32 m+v: 8)
  ElementCost gathered{2, 1};         // format ZeRO-3/FSDP gather layers in (the compute format)
};

// Mixed precision (half weights, fp32 master + optimizer state) as DeepSpeed/Megatron keep it.
ModelStateBytes mixed_precision_state(ElementCost half, ElementCost optimizer_state, GradFormat grads);

// FSDP mixed precision: the sharded flat parameter and its gradient stay fp32 (4 + 4 + optimizer),
// the half copy exists only for gathered units.
ModelStateBytes fsdp_mixed_precision_state(ElementCost half, ElementCost optimizer_state);

// Everything in one format (fp32, or the lesson's fp16-everywhere): no master copy.
ModelStateBytes single_format_state(ElementCost format, ElementCost optimizer_state);

// The GPUs and how the work is split over them.
struct ParallelLayout {
  uint64_t gpus = 1;   // world size (--gpus)
  uint64_t nodes = 1;  // --nodes; gpus split evenly
  ShardingStrategy sharding = ShardingStrategy::ddp;
  Offload offload = Offload::none;
  uint64_t tp = 1;                                // tensor-parallel size (--tp)
  uint64_t pp = 1;                                // pipeline stages (--pp)
  uint64_t dp = 0;                                // data-parallel size (--dp); 0 = gpus / (tp x pp)
  bool sequence_parallel = false;                 // --sequence-parallel (Megatron; needs tp > 1)
  uint64_t virtual_stages = 1;                    // interleaved 1F1B: model chunks per pipeline rank
  uint64_t micro_batches = 0;                     // micro-batches per step; 0 = enough to fill the pipeline
  Checkpointing recompute = Checkpointing::none;  // activation recomputation
  uint64_t prefetch_layers = 1;                   // ZeRO-3/FSDP: layers gathered ahead of the one computing
};

// The step's shape for the Megatron activation model (Korthikanti et al. 2022).
struct TransformerStep {
  uint64_t seq = 0;                        // s
  uint64_t micro_batch = 1;                // b
  ElementCost activation{2, 1};            // bytes per saved activation (2: the paper's constants)
  bool dropout = true;                     // 1-byte dropout masks (the paper counts them)
  Attention attention = Attention::eager;  // sdpa (fused) keeps no s x s scores
  bool linear_biases = false;              // biases on every linear layer (GPT-2/3 style)
  uint64_t position_rows = 0;              // learned position embeddings (GPT: max positions); 0 = rotary
  uint64_t vocab_multiple = 128;           // Megatron pads the vocabulary to a multiple of this x tp
};

// Everything the sharded estimate needs.
struct ShardingRequest {
  uint64_t parameters = 0;                // P, total
  uint64_t trainable = 0;                 // trainable parameters (<= P); gradients and optimizer
  ModelStateBytes bytes;                  // bytes per parameter of each term
  uint64_t optimizer_extra_bytes = 0;     // per-tensor optimizer constants (Adam step), whole model
  uint64_t largest_layer_parameters = 0;  // ZeRO-3/FSDP gathered unit (DeepSpeed: largest module)
  uint64_t activation_bytes = 0;          // per GPU when tp = pp = 1 (the single-GPU activation model)
  std::optional<TransformerArch> arch;    // needed for tp/pp/sequence parallel
  TransformerStep step;                   // seq, micro-batch, ... for the Megatron activation model
  ParallelLayout layout;
};

// One GPU's memory, by term. total = the sum.
struct GpuBreakdown {
  uint64_t parameters = 0;       // weights held on this GPU
  uint64_t gradients = 0;        // gradients (+ fp32 gradient copy)
  uint64_t optimizer_state = 0;  // optimizer state + fp32 master weights
  uint64_t activations = 0;
  uint64_t buffers = 0;  // gathered layers (ZeRO-3/FSDP), unsharded half copy (FSDP), DDP's gradient buckets
  uint64_t total = 0;
};

// Which ranks a RankLoad describes.
enum class RankKind {
  all,            // every rank (no pipeline)
  first_stage,    // pipeline stage 0
  middle_stages,  // stages 1 .. pp-2, reported by stage 1 (most micro-batches in flight)
  last_stage,     // stage pp-1
};

// One kind of rank (all ranks of a kind hold the same bytes).
struct RankLoad {
  RankKind kind = RankKind::all;
  uint64_t stage = 0;  // pipeline stage index

  uint64_t count = 0;             // how many GPUs are of this kind
  uint64_t model_parameters = 0;  // parameters in this rank's model-parallel slice (before sharding)
  GpuBreakdown gpu;
  uint64_t host_bytes = 0;         // offloaded to host memory by this rank
  uint64_t host_pinned_bytes = 0;  // of which pinned (page-locked) transfer buffers
};

// The numbers behind the most-loaded GPU's bytes, for the arithmetic a renderer writes out.
struct ShardingArithmetic {
  ModelStateBytes bytes;  // bytes per parameter of each term
  uint64_t largest_layer_parameters = 0;
  uint64_t vocab_multiple = 0;
  uint64_t trainable = 0;  // trainable parameters in the most-loaded rank's slice
  uint64_t weight_elements = 0;
  uint64_t gradient_elements = 0;
  uint64_t state_elements = 0;
  uint64_t gathered_bytes = 0;        // ZeRO-3/FSDP gathered layers
  uint64_t unsharded_copy_bytes = 0;  // FSDP's unsharded low-precision parameters
  uint64_t bucket_bytes = 0;          // torch DDP's gradient buckets: a second copy of every gradient
  uint64_t host_bytes_per_rank = 0;   // the heaviest offload of one rank
  // Megatron split (tp or pp > 1).
  uint64_t layers_per_stage = 0;
  uint64_t padded_vocab = 0;
  uint64_t tp_rank_parameters = 0;  // per tp rank, over all stages
  // Korthikanti et al. activations (tp or pp > 1): one layer and micro-batch.
  uint64_t layer_activation = 0;
  uint64_t layer_replicated = 0;
  uint64_t layer_split = 0;
  uint64_t layer_scores = 0;
  uint64_t layers_per_chunk = 0;
  uint64_t chunks_in_flight = 0;
};

struct ShardingResult {
  ParallelLayout layout;  // resolved: dp filled in
  uint64_t gpus_per_node = 0;
  uint64_t shard_group = 0;          // ranks one shard group spans (dp; HYBRID_SHARD: inside a node)
  size_t most_loaded = 0;            // index of the most-loaded kind in ranks
  GpuBreakdown gpu;                  // the most-loaded GPU: the one that runs out first
  uint64_t host_bytes_per_node = 0;  // upper bound: every rank on the node as the heaviest
  uint64_t host_pinned_bytes_per_node = 0;
  std::vector<RankLoad> ranks;
  ShardingArithmetic arithmetic;  // the numbers each formula is worked with

  const RankLoad& heaviest() const { return ranks[most_loaded]; }
};

// Per-GPU and per-host memory of the layout; Error naming the option ("--tp", "--zero", ...)
// when the layout is impossible.
ShardingResult estimate_sharded(const ShardingRequest& request);

// Checks the layout alone (tp x pp x dp == gpus, nodes, offload vs stage, ...); estimate_sharded
// calls it. Returns the layout with dp filled in.
ParallelLayout validate_layout(const ParallelLayout& layout, const std::optional<TransformerArch>& arch,
                               const TransformerStep& step);

// --gpus auto: which counts and stages to try.
struct LayoutSearch {
  uint64_t gpus_per_node = 8;  // counts above one node are whole nodes
  uint64_t max_gpus = 4096;
  bool vary_sharding = true;  // also try lower ZeRO stages / lighter FSDP strategies, lowest first
};

struct LayoutSearchResult {
  bool found = false;
  ShardingResult result;  // the smallest layout that fits (when found)
  uint64_t layouts_tried = 0;
};

// The smallest GPU count (then the lowest ZeRO stage / lightest FSDP strategy) whose
// most-loaded GPU satisfies `fits`. tp and pp stay as requested; dp grows.
LayoutSearchResult search_layout(const ShardingRequest& request, const LayoutSearch& search,
                                 const std::function<bool(const ShardingResult&)>& fits);

// Same, against a plain byte budget per GPU (most-loaded total <= budget).
LayoutSearchResult search_layout(const ShardingRequest& request, const LayoutSearch& search,
                                 uint64_t budget_bytes_per_gpu);

// Names, for options and explain lines.
ShardingStrategy parse_zero_stage(std::string_view subject, std::string_view text);  // "0".."3"
ShardingStrategy parse_fsdp_strategy(std::string_view subject,
                                     std::string_view text);  // "full-shard", "FULL_SHARD"
Offload parse_offload(std::string_view subject, std::string_view text);
GradFormat parse_grad_format(std::string_view subject, std::string_view text);
std::string sharding_name(ShardingStrategy s);    // "zero-2", "fsdp-full-shard", "ddp"
std::string sharding_engine(ShardingStrategy s);  // "DeepSpeed ZeRO stage 2", "PyTorch FSDP FULL_SHARD"
std::string offload_name(Offload o);

// 0 none, 1 optimizer state, 2 + gradients, 3 + parameters.
int sharding_level(ShardingStrategy s);
bool is_fsdp(ShardingStrategy s);

}  // namespace memplan
