#pragma once
// The cross-attention decoder layers of Llama 3.2 Vision (mllama) in the training ledger
// (cross_attention_activations.cpp): the language model's layers listed in cross_attention_layers
// attend to the projected image features instead of the text. They run only when the sample has
// images (transformers' MllamaTextModel skips them otherwise), so the text ledger counts the other
// layers and this part counts them, per sample, beside the images.

#include <cstdint>
#include <string>
#include <vector>

#include <memplan/model.hpp>
#include "core/memory/activations.hpp"

namespace memplan {

struct CrossAttentionActivations {
  uint64_t layers = 0;        // cross-attention layers
  uint64_t image_tokens = 0;  // N: the image features every one of them attends to, per sample
  uint64_t layer_bytes = 0;   // what one cross-attention layer keeps, per sample
  uint64_t shared_bytes = 0;  // per sample, once for all of them (their common inputs)
  uint64_t rebuild_bytes =
      0;  // full checkpointing: a rebuilt cross-attention layer beyond a self-attention one
  uint64_t bytes_per_sample = 0;
  std::vector<SavedTensor> rows;  // for one sample (recording only)
  std::vector<std::string> notes;
};

// The cross-attention layers of `arch` (arch.cross_attention_layers of arch.layers) over
// `image_tokens` image features per sample, at opts.seq text tokens. self_layer_bytes: what one
// self-attention layer keeps per sample without checkpointing (the rebuild it is compared with).
// Error naming the flag for what the ledger does not model yet (autocast, eager attention, LoRA,
// selective checkpointing, the CPU runtime).
CrossAttentionActivations cross_attention_activations(const TransformerArch& arch, uint64_t image_tokens,
                                                      const ActivationOptions& opts,
                                                      uint64_t self_layer_bytes);

}  // namespace memplan
