#pragma once
// Parameter count of a transformer built from the blocks the activation model describes
// (TransformerArch): embeddings and learned positions, per layer q/k/v (fused or separate),
// output projection, MLP (2 or 3 matrices, x experts), norms (LayerNorm weight+bias, RMSNorm
// weight), biases when arch.bias, final norm, and an LM head unless tied. Counts tensors too
// (Adam keeps a 4-byte step per tensor). For Hugging Face configs see hf_config.

#include <cstdint>

#include <memplan/model.hpp>

namespace memplan {

struct BlockParameters {
  uint64_t parameters = 0;  // elements
  uint64_t tensors = 0;     // parameter tensors (tied weights once)
};

// Parameters of `arch` as the blocks above; Error when layers/hidden/heads are 0.
BlockParameters count_block_parameters(const TransformerArch& arch);

}  // namespace memplan
