#pragma once
// The estimate: parameters, gradients, optimizer state and activations (or the KV cache for
// inference), plus the per-process overhead. Plain values: each term holds its bytes and the
// structured arithmetic behind them (count x bytes per element x copies, the format as an id);
// what the numbers rest on is a list of notes {code, fields}. Words are the renderer's job
// (src/cli/render_estimate.cpp). estimate() allocates nothing unless a sharded layout or LoRA
// adapters are asked for.

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include <memplan/lora.hpp>
#include <memplan/request.hpp>
#include <memplan/sharding.hpp>
#include <memplan/timeline.hpp>

namespace memplan {

// The terms, in the order they are reported; overhead last.
enum class TermKind : uint8_t {
  parameters,
  gradients,
  optimizer_state,
  activations,
  kv_cache,
  buffers,
  overhead
};
inline constexpr size_t k_term_kinds = 7;

// Stable identifier of a term: the JSON and CSV key ("optimizer_state").
const char* term_key(TermKind kind);

// Which format a count is priced in: a slot of the request's recipe, the --quantize or
// --kv-format format, or a fixed one.
enum class FormatId : uint8_t {
  none,
  weights,          // recipe.weights
  gradients,        // recipe.gradients
  master,           // recipe.master
  optimizer_state,  // recipe.optimizer_state
  activations,      // recipe.activations
  quantized,        // request.quantize
  kv,               // request.kv_format, else the activation format
  stored,           // the weights as stored in the model file
  fp32,             // 4 B (step counters)
  int8_blockwise,   // bitsandbytes 8-bit state: 1 B + 4 B absmax per 256
};

// One line of arithmetic a reviewer can check by hand. The numbers mean what `code` says.
enum class LineCode : uint8_t {
  product,                // {what} = n0 x cost(format) = bytes; copies n1 > 1: per copy, x n1 copies
  stored_weights,         // bytes read from the model file
  lora_adapters,          // n0 base + n1 adapters = n2 parameters (the adapters' sum from Estimate::lora)
  blockwise_state,        // n0 trainable x n1 copies x (1 B + 4 B / 256) = bytes
  factored_state,         // n0 numbers x cost(format) = bytes
  adapter_step_counters,  // n0 adapter tensors x 4 B = bytes
  step_counters,          // n0 tensors x 4 B = bytes
  measured_rows,          // batch n0 x n1 B per row (--activation-bytes-per-row) = bytes
  layers_per_sample,      // n0 layers (layer 0: n1 B, others n2 B) + outside = n3 B per sample
  batch_per_sample,       // batch n0 x n1 B = bytes
  autocast_weights,       // + autocast's weight copies = bytes
  mlp_working_buffer,     // batch n0 x 2 x n1 x format = bytes
  kv_cache,               // 2 x n0 layers x n1 kv heads x n2 head dim x seq n3 x batch n4 x cost(format)
  kv_working_buffer,      // working buffer (kind n0, see KvBuffer) = bytes
  most_loaded,            // on the most-loaded GPU = bytes (one GPU would hold n0 B)
  overhead,               // bytes; n0 = 1 when predicted (the largest CUDA context of the GPUs), 0 given
  kv_cache_layers,        // n0 cached elements per token and layer x (n1 full layers x seq + n2 windowed x n3
                          // tokens)
  kv_cache_latent,        // MLA: n0 latent elements per token (n1 naive per-head) x n2 layers x seq n3
  kv_cache_cross,         // n0 cached elements per token and layer x (n1 self-attention layers x seq +
                          // n2 cross-attention layers x n3 image tokens)
  bnb_dequant_weight,     // Lit-GPT + bitsandbytes 4-bit: the largest weight (n0 elements) dequantised, x 4 B
  paged_state,  // paged optimizer: the state of n0 numbers in n1 tensors of 1e5+ = bytes, in unified
                // memory (not in the term's bytes)
  // batch x n0 images x (n1 B tower + n2 B projector per image) = bytes; n1 = 0: the tower is frozen,
  // n3 its working memory per image while it runs (not added)
  vision_tower,
  // Qwen2-VL: batch x n0 images x n2 B projector per image = bytes; the frozen tower's working memory
  // n3 per sample (all n0 images of a sample are one patch sequence of n1 patches), not added
  vision_patches,
  // mllama: batch x (n0 cross-attention layers x n1 B + n2 B of their shared inputs + n3 B of a
  // rebuilt layer beyond a self-attention layer's, full checkpointing) per sample = bytes
  cross_attention_layers,
};

// What a product line counts.
enum class Counted : uint8_t {
  parameters,
  frozen_weights,
  trainable_weights,
  gradients,
  gradient_copy,  // the fp32 gradient copy the optimizer steps on (--grad-format half+fp32)
  master_weights,
  optimizer_state,
  unquantised_embedding,  // the token embedding a Linear-only quantiser leaves in the weight format
  unquantised_lm_head,    // the LM head transformers' quantisers leave in the weight format
  unquantised_experts,    // transformers v5's fused MoE experts and router, which bitsandbytes leaves
  unquantised_layers      // decoder layers transformers >= 5.5 does not convert (nn.Linear subclasses)
};

// The inference working buffer kinds (kv_cache.cpp).
enum class KvBuffer : uint8_t { attention_scores, mlp_intermediate, logits, all_logits, none };

// Plain data without initialisers: a term's unused line slots cost nothing to create (estimate()
// fills every field of the lines it adds; `Line l{}` for a zeroed one).
struct Line {
  LineCode code;
  Counted what;
  FormatId format;
  uint64_t n[4];
  uint64_t bytes;
};

// How a term was obtained, where more than one way exists.
enum class Basis : uint8_t {
  computed,        // from counts and formats
  none_inference,  // gradients / optimizer state: none for inference
  stored,          // parameters: the file's stored bytes
  quantized,       // parameters: frozen weights in the --quantize format (+ trainable ones)
  not_counted,     // activations: no architecture, sequence or measurement
  measured,        // activations: --activation-bytes-per-row
  ledger,          // activations: the transformer or MLP ledger (training)
  mlp_buffer,      // inference with an MLP: input + output of the widest layer
  kv_buffer,       // inference with a transformer: the largest prefill buffer
};

struct Term {
  TermKind kind = TermKind::parameters;
  Basis basis = Basis::computed;
  uint64_t bytes = 0;
  uint64_t single_gpu_bytes = 0;     // before a parallel layout split it (== bytes on one GPU)
  uint64_t batch = 0;                // activations / KV cache: the micro-batch
  uint64_t per_sample = 0;           // activations: bytes per sample (row); KV cache: the sequence
  uint64_t fixed_bytes = 0;          // activations: autocast's batch-independent weight copies
  FormatId format = FormatId::none;  // gradients: the buffer's format (a layout may keep fp32);
                                     // parameters: fp32 for FSDP's flat parameter under mixed-*
  bool plus_fp32 = false;            // gradients: and an fp32 copy the optimizer steps on
  uint8_t line_count = 0;
  std::array<Line, 6> lines;  // the first line_count are set

  void add(const Line& line) {
    if (line_count < lines.size()) lines[line_count++] = line;
  }
};

// What the numbers rest on; the renderer words each code, with fields as listed.
enum class NoteCode : uint8_t {
  blockwise8bit,            // bitsandbytes blocks, small tensors not modelled
  factored,                 // adafactor: n0 FactoredShapes, n1 its count
  steps_unknown_tensors,    // step counters not counted: no tensor count
  steps_unknown_trainable,  // step counters of the trainable tensors not counted
  seq_beyond_context,       // n0 seq > n1 positions
  activations_need_seq,     // n0 the model's context (0 unknown)
  activations_unknown,      // no architecture, --mlp or measurement
  checkpointing_compute,    // x: extra compute fraction
  ledger,                   // the activation ledger's notes (activation_ledger_detail) go here
  largest_layer_unknown,    // ZeRO-3/FSDP gathered buffers need --largest-layer
  lora,                     // LoRA adapters are the trainable parameters
  trainable_share,          // x: share; n0 trainable parameters
  loss_scaling,             // fp16 training needs GradScaler
  gib,                      // GiB = 2^30 B; allocator not included
  inference_split,          // --mode infer over tp GPUs (x): n0 KV heads per GPU, n1 GPUs per KV head
  paged,                    // paged optimizer: n0 = 1 when the paged share is known, else all on the GPU
};

struct Note {  // plain data: see Line
  NoteCode code;
  uint64_t n[2];
  double x;
};

// The activation ledger in numbers; its rows (names, shapes) are listed on demand by
// activation_ledger_rows() (src/core/memory/activation_term.hpp) for --explain and JSON.
struct LedgerSummary {
  bool present = false;  // a transformer or MLP ledger was computed
  bool mlp = false;
  uint64_t layers = 0;
  uint64_t first_layer_bytes = 0;
  uint64_t layer_bytes = 0;
  uint64_t bytes_per_sample = 0;
  uint64_t held_bytes = 0;               // alive for the loss, freed before backward (logits, their upcast)
  uint64_t loss_input_bytes = 0;         // the loss's input (logits in the loss format): its gradients' size
  uint64_t log_softmax_input_bytes = 0;  // torch < 1.11: log-softmax's saved input, freed with it
  uint64_t kept_bytes = 0;               // the logits the training loop keeps past backward (keep_logits)
};

// A saved tensor of the activation ledger (for --explain and JSON).
struct LedgerRow {
  std::string name;
  std::string shape;
  std::string format;
  uint64_t bytes = 0;
};

struct Estimate {
  Mode mode = Mode::train;
  uint64_t trainable_parameters = 0;
  std::optional<LoraAdapters> lora;  // set when request.lora: the adapters trained
  std::array<Term, k_term_kinds> terms;
  std::array<bool, k_term_kinds> present{};  // which terms apply (kv_cache, buffers may not)
  uint8_t note_count = 0;
  std::array<Note, 16> notes;  // the first note_count are set
  LedgerSummary ledger;
  std::optional<ShardingResult> sharded;  // set when request.parallel: per-rank loads, host memory
  StepTimeline timeline;                  // single-GPU training: the step's phases and their peak

  const Term& term(TermKind k) const { return terms[static_cast<size_t>(k)]; }
  Term& term(TermKind k) { return terms[static_cast<size_t>(k)]; }
  bool has(TermKind k) const { return present[static_cast<size_t>(k)]; }
  uint64_t bytes(TermKind k) const { return has(k) ? term(k).bytes : 0; }
  uint64_t total_bytes() const;  // every term but the overhead
  // The most allocated at once: the timeline's peak where there is one, else total_bytes().
  uint64_t peak_bytes() const;
  // What torch's caching allocator reserves (timeline.reserved, CUDA training on one GPU), else the
  // peak: memory held in segments is what cudaMalloc cannot hand to anyone else.
  uint64_t reserved_bytes() const;
  // reserved + overhead (the CUDA context): what nvidia-smi shows, and what the fit verdict compares.
  uint64_t required_bytes() const;
  void note(const Note& n) {
    if (note_count < notes.size()) notes[note_count++] = n;
  }
};

// Computes the estimate; throws Error on inputs that cannot be combined, OverflowError on overflow.
Estimate estimate(const EstimateRequest& request);

}  // namespace memplan
