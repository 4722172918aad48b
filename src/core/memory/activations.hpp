#pragma once
// Activation memory: the tensors autograd keeps for backward (what
// torch.autograd.graph.saved_tensors_hooks sees), each storage once, computed from the
// architecture. Every batch-dependent byte is a whole number of bytes per sample, so
// total_bytes(batch) == batch x bytes_per_sample exactly; the only batch-independent term
// (autocast's half-precision weight copies) is kept apart in fixed_bytes.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <memplan/compute.hpp>
#include <memplan/lora.hpp>
#include <memplan/model.hpp>
#include <memplan/storage_format.hpp>
#include <memplan/transformers_release.hpp>

namespace memplan {

// Which PyTorch the ledger describes; a few saved tensors differ between builds.
//   cuda:          torch >= 2 on a GPU: dropout keeps a 1-byte bool mask; autocast runs softmax
//                  in fp32; fused sdpa keeps no s x s matrix.
//   cpu_torch113:  Debian's torch 1.13 on CPU, as measured in tests/data/torch_cpu_reference.json:
//                  dropout keeps a mask in the dtype of its input; autocast runs softmax in the
//                  half format; mean() saves its input (RMSNorm keeps x^2); sdpa is the math path
//                  (same tensors as eager).
enum class Runtime { cuda, cpu_torch113 };

// Positions per chunk of the chunked loss (Lit-GPT's lm_head_chunk_size).
inline constexpr uint64_t k_loss_chunk = 128;
// torchtune's CEWithChunkedOutputLoss: num_output_chunks = 8 along the sequence (tensor_split: the
// first chunks ceil(s / 8) positions).
inline constexpr uint64_t k_torchtune_output_chunks = 8;

// What to compute activations for.
struct ActivationOptions {
  uint64_t batch = 1;  // micro-batch (samples)
  uint64_t seq = 0;    // tokens per sample (transformers); ignored by MLPs
  Attention attention = Attention::sdpa;
  Checkpointing checkpointing = Checkpointing::none;
  ElementCost act_cost{4, 1};       // bytes per element of what the recipe's matmuls produce
  std::string act_format = "fp32";  // its name, for the ledger ("bf16")
  bool autocast = false;            // amp recipe: weights and residual stream fp32, matmul outputs
                                    // half; each Linear keeps a half copy of its input
  bool fp32_logits = false;         // the model upcasts logits to fp32 before the loss (HF causal LMs)
  // Hugging Face's causal-LM loss before 4.46 / 4.49 (hf_release_rules.hpp): the half logits are
  // dropped once upcast, and the loss reads a copy of the first s - 1 positions.
  bool logits_half_dropped = false;
  bool loss_shifted_copy = false;
  // The transformers release whose eager attention runs (hf_release_rules.hpp).
  TransformersRelease transformers;
  bool dropout = false;  // training with the architecture's dropout probabilities (> 0)
  Runtime runtime = Runtime::cuda;
  // torch before 1.11 (torch_release.hpp): softmax keeps its input for backward besides its output.
  bool softmax_keeps_input = false;
  Loss loss = Loss::plain;   // causal LMs: how the logits and cross-entropy are computed (compute.hpp)
  bool keep_logits = false;  // the training loop keeps the logits through backward (request.hpp)
  // The frozen weights are bitsandbytes 4-bit (QLoRA) of a release before 0.43.2: its MatMul4Bit
  // keeps its input A whenever A requires grad (ctx.tensors = (A, B)), where a frozen nn.Linear
  // keeps none (from 0.43.2 it keeps (None, B): bitsandbytes_release.hpp).
  bool bnb_4bit = false;
  // The frozen weights are bitsandbytes 4-bit layers (any release): Linear4bit.forward casts its
  // input to the compute dtype and returns the product cast back to the input's dtype
  // (bitsandbytes nn/modules.py), so under autocast, whose residual stream is fp32, a 4-bit
  // matmul's output is fp32, not the autocast format.
  bool bnb_layers = false;
  // A half model (the recipe is not amp) trained under torch.autocast all the same: Hugging Face's
  // Trainer with bf16=True / fp16=True enables accelerate's autocast whatever the weights' dtype.
  bool autocast_over_half = false;
  // LoRA/QLoRA: every base weight is frozen (a frozen Linear keeps no input for its own weight
  // gradient) and these matrices carry adapters, which keep their input and the rank-r x.A.
  std::optional<LoraTargets> lora;
  // Lit-GPT 8641822 on Fabric 2.1 / torch 2.1 runs the step (framework.hpp): its RMSNorm, fused
  // qkv (v a view of it) and LoRAQKVLinear, F.gelu, fp32 logits by chunks, a 4-bit LM head.
  bool litgpt = false;
  // torchtune's recipes run the step (framework_profile.hpp): its chunked loss upcasts each of its 8
  // output chunks to fp32 and the recipe deletes the logits before backward.
  bool torchtune = false;
  // Full checkpointing's layer inputs offloaded to the host but the last one's (request.hpp).
  bool offloaded_checkpoints = false;
  // List the rows and notes (false: only the byte counts, which builds no string).
  bool record = true;
};

// What a ledger entry is.
enum class Role {
  saved,       // kept by autograd for backward, in every layer
  held,        // not saved by autograd but alive at the peak (the logits the loss reads)
  recomputed,  // rebuilt during backward, one layer at a time (checkpointing)
};

// One tensor of the ledger. bytes are for the whole requested batch.
struct SavedTensor {
  std::string name;    // "softmax probabilities"
  std::string shape;   // "8 x 12 x 2048 x 2048"
  std::string format;  // "bf16", "fp32", "bool"
  uint64_t bytes = 0;
  Role role = Role::saved;
};

// The activation memory of one model at one batch.
struct ActivationLedger {
  std::vector<SavedTensor> per_layer;        // one typical layer (layer 1 onward)
  uint64_t layer_bytes = 0;                  // saved bytes of one typical layer (role saved)
  uint64_t first_layer_bytes = 0;            // saved bytes of layer 0 (differs when fed hidden states)
  uint64_t layers = 0;                       // 0 for an MLP (everything is in outside_layers)
  uint64_t recompute_bytes = 0;              // one layer rebuilt in backward (checkpointing), else 0
  std::vector<SavedTensor> outside_layers;   // embeddings, final norm, logits, loss (MLP: all)
  uint64_t bytes_per_sample = 0;             // everything batch-dependent, for one sample
  uint64_t saved_bytes_per_sample = 0;       // the part autograd saves (role saved), for one sample
  uint64_t total_bytes = 0;                  // batch x bytes_per_sample, exactly
  uint64_t fixed_bytes = 0;                  // batch-independent: autocast's half weight copies
  uint64_t layer_weight_copy_bytes = 0;      // autocast + full checkpointing: one layer's half weight copies
  uint64_t layer_cached_copy_bytes = 0;      // and those autocast's cache holds (weights requiring grad)
  uint64_t held_bytes_per_sample = 0;        // role held (logits, their fp32 upcast): freed before backward
  uint64_t loss_input_bytes_per_sample = 0;  // what the loss reads its gradient into (log-softmax size)
  uint64_t log_softmax_input_bytes_per_sample = 0;  // torch < 1.11: log-softmax's input, saved with it
  uint64_t kept_bytes_per_sample = 0;               // the logits the training loop keeps (keep_logits)
  double recompute_fraction = 0.0;                  // extra compute per step from checkpointing (0.33 = +33%)
  std::vector<std::string> notes;                   // modelling choices, recompute cost
};

// Activations of a transformer (decoder or encoder) at opts.batch x opts.seq; Error when the
// architecture lacks what the model needs (layers, hidden, heads) or seq is 0.
ActivationLedger transformer_activations(const TransformerArch& arch, const ActivationOptions& opts);

// Activations of an MLP of these widths (784,512,256,10: ReLU between layers), per batch row.
ActivationLedger mlp_activations(const std::vector<uint64_t>& widths, const ActivationOptions& opts);

const char* to_string(Role r);

}  // namespace memplan
