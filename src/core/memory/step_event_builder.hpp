#pragma once
// The allocator replay's tensors and the builder of its event list (step_events.cpp,
// optimizer_step_events.cpp).

#include <cstdint>
#include <vector>

#include "core/memory/step_events.hpp"

namespace memplan::replay {

// A tensor of the replay: its group (-1 before the layers, 0.. a layer, -2 after) and bytes.
struct Tensor {
  int64_t group = 0;
  uint64_t bytes = 0;
  uint64_t id = 0;
  uint64_t elements = 0;  // when the bytes are whole bytes per element (sized), else 0
  // Eager attention: the bytes of each score tensor (q.k^T, scaled, masked), how many of them are made
  // (each freed by the next, the last once this one exists) just before this one, and whether the
  // scores' gradients are made when this one is freed (the probabilities).
  uint64_t scores = 0;
  uint8_t made_before = 0;
  bool grad_chain = false;
};

class Builder {
 public:
  std::vector<StepEvent> events;
  Phase phase = Phase::weights;
  uint8_t step = 0;

  uint64_t alloc(uint64_t bytes) {
    const uint64_t id = ++next_;
    if (bytes) events.push_back({id, bytes, true, phase, step});
    return id;
  }
  void free(uint64_t id, uint64_t bytes) {
    if (bytes) events.push_back({id, bytes, false, phase, step});
  }
  void alloc(Tensor& t) { t.id = alloc(t.bytes); }
  void free(const Tensor& t) { free(t.id, t.bytes); }

 private:
  uint64_t next_ = 0;
};

}  // namespace memplan::replay
