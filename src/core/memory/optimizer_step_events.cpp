#include "core/memory/optimizer_step_events.hpp"

#include "core/base/checked.hpp"

namespace memplan::replay {

// torch's Adam/AdamW step: each tensor's state made at step 1 (`allocate_state`); foreach, one
// temporary per tensor for all at once; the per-tensor loop, two for one tensor at a time.
void optimizer_loop(Builder& b, std::vector<std::vector<Tensor>>& state,
                    const std::vector<uint64_t>& temp_bytes, bool foreach, bool allocate_state) {
  for (size_t i = 0; i < state.size(); ++i) {
    if (allocate_state)
      for (Tensor& t : state[i]) b.alloc(t);
    if (foreach) continue;
    const uint64_t t1 = b.alloc(temp_bytes[i]);
    const uint64_t t2 = b.alloc(temp_bytes[i]);
    b.free(t2, temp_bytes[i]);
    b.free(t1, temp_bytes[i]);
  }
  if (!foreach) return;
  std::vector<uint64_t> temps;
  for (size_t i = 0; i < state.size(); ++i) temps.push_back(b.alloc(temp_bytes[i]));
  for (size_t i = 0; i < state.size(); ++i) b.free(temps[i], temp_bytes[i]);
}

// transformers.AdamW.step (optimizer_loop.hpp): each tensor's state at step 1, then its
// denom = exp_avg_sq.sqrt().add_(eps), which frees the previous tensor's when bound to the name.
void hf_adamw_loop(Builder& b, const std::vector<LoopTensor>& ts, uint64_t bytes_per_number,
                   std::vector<std::vector<Tensor>>* state_to_allocate) {
  uint64_t previous = 0;
  uint64_t previous_bytes = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    if (state_to_allocate)
      for (Tensor& t : (*state_to_allocate)[i]) b.alloc(t);
    const uint64_t bytes = checked_mul(ts[i].n, bytes_per_number, "timeline bytes");
    const uint64_t denom = b.alloc(bytes);
    b.free(previous, previous_bytes);
    previous = denom;
    previous_bytes = bytes;
  }
  b.free(previous, previous_bytes);
}

// transformers' Adafactor.step, statement by statement (optimizer_loop.hpp), fp32 throughout; the
// names `grad`, `p_data_fp32` and `update` keep their tensors until they are bound to the next.
void adafactor_loop(Builder& b, const std::vector<LoopTensor>& ts, bool half_weights,
                    std::vector<std::vector<Tensor>>* state_to_allocate) {
  struct Held {
    uint64_t id = 0;
    uint64_t bytes = 0;
  };
  Held grad32, weight32, update;
  auto rebind = [&](Held& name, uint64_t bytes) {
    b.free(name.id, name.bytes);
    name = {b.alloc(bytes), bytes};
  };
  for (size_t i = 0; i < ts.size(); ++i) {
    const uint64_t n = checked_mul(ts[i].n, 4, "timeline bytes");
    if (half_weights) rebind(grad32, n);  // grad = grad.float()
    if (state_to_allocate)
      for (Tensor& t : (*state_to_allocate)[i]) b.alloc(t);
    if (half_weights) rebind(weight32, n);  // p_data_fp32 = p.float()
    const uint64_t square = b.alloc(n);     // grad ** 2
    const uint64_t sum = b.alloc(n);        // + eps
    b.free(square, n);
    b.free(update.id, update.bytes);  // the previous tensor's update, unbound at last
    const uint64_t f = checked_mul(ts[i].factors, 4, "timeline bytes");
    const uint64_t factors = b.alloc(f);  // r and c (a vector: none)
    const uint64_t product = b.alloc(n);  // r x c (a vector: exp_avg_sq.rsqrt())
    b.free(factors, f);
    b.free(sum, n);
    update = {product, n};
    const uint64_t negated = b.alloc(n);  // -update
    b.free(negated, n);
  }
  b.free(update.id, update.bytes);
  b.free(grad32.id, grad32.bytes);
  b.free(weight32.id, weight32.bytes);
}

}  // namespace memplan::replay
