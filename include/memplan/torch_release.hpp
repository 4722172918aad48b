#pragma once
// The PyTorch release a training step runs on (--torch). A few of the rules memplan models
// changed between releases; each is named where it is decided:
//   before 1.11  softmax and log_softmax keep their input for backward besides their output:
//                derivatives.yaml passed `self` to _softmax_backward_data, which needs only its
//                dtype (https://github.com/pytorch/pytorch/issues/64000, changed by
//                https://github.com/pytorch/pytorch/pull/66018 for 1.11; transformers#16043 reads the
//                two signatures)
//   before 1.13  PyTorch does not set CUDA_MODULE_LOADING=LAZY (pytorch/pytorch#86509), and its wheels
//                were built for CUDA before 11.7 (+cu113 for 1.10 to 1.12, +cu111 for 1.8 and 1.9):
//                the kernels load eagerly into the context (cuda_runtime.hpp)
//   before 2.0   zero_grad() keeps the gradients (set_to_none=False), and the optimizers loop one
//                tensor at a time (foreach became the default on CUDA in 2.0); there is no
//                F.scaled_dot_product_attention, so attention is eager
//   before 2.1   the caching allocator has no expandable segments
// The default, 2.11, is the release the H200 figures were measured with (cuda_runtime.hpp).

#include <cstdint>
#include <string>
#include <string_view>

namespace memplan {

struct TorchRelease {
  uint32_t major = 2;
  uint32_t minor = 11;
  uint32_t value() const { return major * 100 + minor; }  // 1.10 -> 110
  bool before(uint32_t ma, uint32_t mi) const { return value() < ma * 100 + mi; }
  // softmax and log_softmax keep their input for backward (before 1.11).
  bool softmax_keeps_input() const { return before(1, 11); }
};

// "1.10", "2.5", "1.10.2", "2.5.1+cu121" (the patch and local parts are ignored); 1.8 to 2.99.
// Else an Error naming `subject`.
TorchRelease parse_torch_release(std::string_view subject, std::string_view text);
std::string to_string(TorchRelease t);  // "1.10"

}  // namespace memplan
