#pragma once
// What one step of transformers' Adafactor allocates (the Hugging Face Trainer's optim="adafactor";
// src/transformers/optimization.py, Adafactor.step, the same tensor operations from 4.16 of early
// 2022 to today's). It walks the trainable tensors one at a time; for a tensor of n numbers:
//   update = grad**2 + eps        the square and the sum (2 n); the previous tensor's `update` is
//                                 still bound to the name until this assignment completes
//   update = _approx_sq_grad(..)  the factors r (rows) and c (cols) and their outer product (n),
//                                 while the old update (n) lives; a vector: exp_avg_sq.rsqrt() (n)
//   p.add_(-update)               -update (n) while update (n) lives
// All of it in fp32: half-precision gradients and weights are copied to fp32 first (grad.float(),
// p.float(), 2 n more). Measured on CPU with torch 1.13's profiler to the byte
// (bench/accuracy/optimizer_step_peak.py, tests/data/torch_cpu_adafactor_step.json).

#include <cstdint>
#include <vector>

#include <memplan/estimate.hpp>
#include <memplan/request.hpp>

namespace memplan {

// One trainable tensor of the loop: its numbers, and the factors' numbers (rows + cols of a
// matrix; 0 for a vector, which keeps a full exp_avg_sq and makes no factors).
struct AdafactorTensor {
  uint64_t n = 0;
  uint64_t factors = 0;
};

// The trainable tensors in the order the loop visits them (model.parameters()): the model's
// parameter tensors, or LoRA's A and B (even shares of the trainable numbers); empty when the
// shapes are unknown.
std::vector<AdafactorTensor> adafactor_tensors(const EstimateRequest& r, const Estimate& e);

// fp32 tensors of n numbers alive at a tensor's high point: 2 (the update and its successor), or 4
// when the weights are half precision (+ the fp32 copies of the gradient and the weight).
uint64_t adafactor_fp32_copies(const EstimateRequest& r);

// The loop's high point: the tensor i maximising copies x n_i + max(n_{i-1}, factors_i) numbers,
// 4 bytes each.
struct AdafactorPeak {
  uint64_t n = 0;      // that tensor's numbers
  uint64_t extra = 0;  // max(the previous tensor's update, its factors)
  uint64_t copies = 0;
  uint64_t bytes = 0;
};
AdafactorPeak adafactor_loop_peak(const std::vector<AdafactorTensor>& tensors, uint64_t copies);

}  // namespace memplan
