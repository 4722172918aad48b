#pragma once
// Adafactor's factored second moment: for each r x c weight matrix it keeps r + c numbers
// (row and column statistics), for every vector the full size.

#include <cstdint>
#include <string>

#include <memplan/model.hpp>

namespace memplan {

struct FactoredState {
  uint64_t elements = 0;  // state numbers for the whole model
  std::string how;        // which shapes were assumed
};

// From the architecture's weight matrices when known; otherwise assumes the parameters sit in
// `tensors` square matrices (or 4096-wide ones when the tensor count is unknown).
FactoredState factored_state_elements(const ModelSpec& model);

}  // namespace memplan
