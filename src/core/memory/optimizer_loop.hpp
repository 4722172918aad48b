#pragma once
// What the optimizers that walk the trainable tensors one at a time allocate inside step(), per
// tensor of n numbers. Python keeps a temporary bound to its name until the next tensor's
// assignment to that name completes, so the previous tensor's temporary is alive while the next
// one's are made.
//
// transformers' Adafactor (the Hugging Face Trainer's optim="adafactor";
// src/transformers/optimization.py, Adafactor.step, the same tensor operations from 4.16 of early
// 2022 to today's):
//   update = grad**2 + eps        the square and the sum (2 n), beside the previous tensor's update
//   update = _approx_sq_grad(..)  the factors r (rows) and c (cols) and their outer product (n),
//                                 while the old update (n) lives; a vector: exp_avg_sq.rsqrt() (n)
//   p.add_(-update)               -update (n) while update (n) lives
// All of it in fp32: half-precision gradients and weights are copied to fp32 first (grad.float(),
// p.float(), 2 n more). Measured on CPU with torch 1.13's profiler to the byte
// (bench/accuracy/optimizer_step_peak.py, tests/data/torch_cpu_optimizer_step.json).
//
// transformers.AdamW (optim="adamw_hf", the Trainer's default in early 2022; optimization.py of
// 4.16, AdamW.step): exp_avg and exp_avg_sq are updated in place, then
//   denom = exp_avg_sq.sqrt().add_(eps)   one tensor of n in the state's format, beside the
//                                         previous tensor's denom; p.addcdiv_ is in place.

#include <cstdint>
#include <vector>

#include <memplan/estimate.hpp>
#include <memplan/request.hpp>

namespace memplan {

// One trainable tensor of the loop: its numbers, and the factors' numbers (rows + cols of a
// matrix; 0 for a vector, which keeps a full exp_avg_sq and makes no factors).
struct LoopTensor {
  uint64_t n = 0;
  uint64_t factors = 0;
};

// The trainable tensors in the order the loop visits them (model.parameters()): the model's
// parameter tensors, or LoRA's A and B (even shares of the trainable numbers); empty when the
// shapes are unknown.
std::vector<LoopTensor> optimizer_loop_tensors(const EstimateRequest& r, const Estimate& e);

// Adafactor: fp32 tensors of n numbers alive at a tensor's high point: 2 (the update and its
// successor), or 4 when the weights are half precision (+ the fp32 copies of the gradient and the
// weight).
uint64_t adafactor_fp32_copies(const EstimateRequest& r);

// A loop's high point: the tensor i maximising copies x n_i + extra numbers.
struct LoopPeak {
  uint64_t n = 0;      // that tensor's numbers
  uint64_t extra = 0;  // Adafactor: max(the previous tensor's update, its factors); AdamW: the previous denom
  uint64_t copies = 0;
  uint64_t bytes = 0;
};

// Adafactor: copies x n_i + max(n_{i-1}, factors_i) numbers, 4 bytes each.
LoopPeak adafactor_loop_peak(const std::vector<LoopTensor>& tensors, uint64_t copies);

// transformers.AdamW: n_i + n_{i-1} numbers of `bytes_per_number` (the state's format).
LoopPeak hf_adamw_loop_peak(const std::vector<LoopTensor>& tensors, uint64_t bytes_per_number);

}  // namespace memplan
