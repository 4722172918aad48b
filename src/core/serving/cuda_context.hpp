#pragma once
// The CUDA context a PyTorch process holds on each GPU, outside torch's allocator: the driver's
// structures and the kernels loaded into it. With CUDA >= 11.7 and lazy module loading
// (PyTorch's default, CUDA_MODULE_LOADING=LAZY) it is about 400 MB, per PyTorch's maintainer
// (https://github.com/pytorch/pytorch/issues/109888; "~300MB" for a small model in
// https://github.com/pytorch/pytorch/issues/107667, over 1000 MB before lazy loading). No public
// measurement per GPU generation with lazy loading was found, so one figure serves every GPU.
// Checked against public logs: vLLM 0.6.4 on an RTX 3090 logs non_torch_memory=0.35GiB (the
// context, vllm#10517); SGLang on an L4 starts from 21.63 GiB free of the 22.03 GiB torch sees
// (tests/data/sglang_logs/qwq-32b_4xl4_tp4_aws.log).
#include <cstdint>

namespace memplan {

inline constexpr uint64_t k_cuda_context_bytes = 400ull << 20;

}  // namespace memplan
