#pragma once
// A model's parameter tensors, in the order torch registers them (model.parameters()): the
// embeddings, one transformer layer (repeated), what follows the layers; or an MLP's weights and
// biases. The shapes come from the architecture; the step replay divides the parameter, gradient and
// state terms among them, and Adafactor's loop (optimizer_loop.hpp) reads their rows and columns.

#include <cstdint>
#include <vector>

#include <memplan/model.hpp>

namespace memplan {

// A rows x cols matrix (an nn.Linear's weight is out x in, an embedding vocab x hidden), or a
// vector of `rows` numbers (cols == 0); `batch` of them stacked in one tensor (transformers v5's
// fused experts: gate_up_proj [experts, 2 x width, hidden], a bias [experts, width] as batch x rows).
struct TensorShape {
  uint64_t rows = 0;
  uint64_t cols = 0;
  uint64_t batch = 1;
  uint64_t elements() const;
  uint64_t factors() const;  // Adafactor's row and column factors (0 for a vector)
};

struct ParameterShapes {
  std::vector<TensorShape> before;       // embeddings (and an encoder's embedding norm)
  std::vector<TensorShape> dense_layer;  // a MoE model's first, dense layers (dense_layers of them)
  uint64_t dense_layers = 0;
  std::vector<TensorShape> layer;  // one (MoE) layer, repeated `layers` times after the dense ones
  uint64_t layers = 0;
  std::vector<TensorShape> after;             // final norm, LM head, an encoder's pooler
  std::vector<TensorShape> in_order() const;  // before, dense_layer x dense_layers, layer x layers, after
  uint64_t all_layers() const;                // dense_layers + layers
};

// Empty when the model has neither MLP widths nor an architecture. A MoE or latent-attention
// model's tensors follow the one parameter counter's layout and widths (parameter_count.hpp), so
// their elements add up to count_parameters(arch).total.
ParameterShapes parameter_shapes(const ModelSpec& m);

}  // namespace memplan
