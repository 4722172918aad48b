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
// vector of `rows` numbers (cols == 0).
struct TensorShape {
  uint64_t rows = 0;
  uint64_t cols = 0;
  uint64_t elements() const;
};

struct ParameterShapes {
  std::vector<TensorShape> before;  // embeddings (and an encoder's embedding norm)
  std::vector<TensorShape> layer;   // one layer, repeated `layers` times
  uint64_t layers = 0;
  std::vector<TensorShape> after;             // final norm, LM head, an encoder's pooler
  std::vector<TensorShape> in_order() const;  // before, layer x layers, after
};

// Empty when the model has neither MLP widths nor an architecture.
ParameterShapes parameter_shapes(const ModelSpec& m);

}  // namespace memplan
