#pragma once
// Adafactor's factored second moment: for each r x c weight matrix it keeps r + c numbers
// (row and column statistics), for every vector the full size.

#include <cstdint>

#include <memplan/model.hpp>

namespace memplan {

// Which shapes were assumed.
enum class FactoredShapes { architecture, square, width4096 };

struct FactoredState {
  uint64_t elements = 0;  // state numbers for the whole model
  FactoredShapes shapes = FactoredShapes::width4096;
  uint64_t count = 0;  // architecture: the parameters outside matrices; square: the matrices
};

// From the architecture's weight matrices when known; otherwise assumes the parameters sit in
// `tensors` square matrices (or 4096-wide ones when the tensor count is unknown).
FactoredState factored_state_elements(const ModelSpec& model);

}  // namespace memplan
