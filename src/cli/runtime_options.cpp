#include "cli/runtime_options.hpp"

#include <memplan/error.hpp>

#include "core/memory/hf_release_rules.hpp"

namespace memplan::cli {

// --cuda and --cuda-module-loading: lazy loading exists from CUDA 11.7 on and is the default where
// PyTorch sets it (1.13 on, pytorch/pytorch#86509) or CUDA itself does (12.2 on); eager otherwise.
// Unless --cuda says otherwise, a release before 1.13 runs on the CUDA of its wheels: 11.3 for 1.10 to
// 1.12 and 11.1 for 1.8 and 1.9 (the +cu113 / +cu111 builds of pytorch.org/get-started/previous-versions;
// none of them was built for 11.7 or later, so their kernels load eagerly).
CudaRuntime resolve_cuda_runtime(const PlanValues& v, TorchRelease torch) {
  CudaRuntime rt;
  if (torch.before(1, 13)) rt.version = torch.before(1, 10) ? CudaVersion{11, 1} : CudaVersion{11, 3};
  if (v.cuda) rt.version = *v.cuda;
  const bool lazy_exists = rt.version.value() >= k_lazy_loading_since.value();
  const bool lazy_default =
      lazy_exists && (!torch.before(1, 13) || rt.version.value() >= k_lazy_loading_default_since.value());
  rt.loading = v.cuda_module_loading.value_or(lazy_default ? ModuleLoading::lazy : ModuleLoading::eager);
  if (rt.loading == ModuleLoading::lazy && !lazy_exists)
    throw Error(Field::cuda_module_loading, "lazy needs CUDA 11.7 or later (" + flag_for(Field::cuda) +
                                                " is " + to_string(rt.version) + "; expected eager)");
  return rt;
}

// --torch and what follows from it (torch_release.hpp): before 2.0 zero_grad() keeps the gradients
// and the optimizers loop per tensor unless --zero-grad / --optimizer-loop say otherwise; expandable
// segments exist from 2.1; --device cpu is torch 1.13's rules, measured.
void resolve_torch_release(const PlanValues& v, EstimateRequest& r) {
  if (v.torch) r.torch = *v.torch;
  if (v.torch && r.device == Device::cpu && v.torch->value() != 113)
    throw Error(Field::torch, to_string(*v.torch) + " with " + flag_for(Field::device) +
                                  " cpu: the CPU rules are torch 1.13's, as measured (expected 1.13, or no " +
                                  flag_for(Field::torch) + ")");
  // F.scaled_dot_product_attention exists from 2.0: before it Hugging Face's attention is eager.
  if (r.device == Device::cuda && r.torch.before(2, 0)) {
    if (v.attention == Attention::sdpa)
      throw Error(Field::attention, "sdpa needs torch 2.0 or later (" + flag_for(Field::torch) + " is " +
                                        to_string(r.torch) + "; expected eager)");
    r.attention = v.attention.value_or(Attention::eager);
  }
  if (r.expandable_segments && r.torch.before(2, 1))
    throw Error(Field::expandable_segments,
                "needs torch 2.1 or later (" + flag_for(Field::torch) + " is " + to_string(r.torch) + ")");
  const bool torch1 = r.torch.before(2, 0);
  r.grads_kept = v.grads_kept.value_or(torch1);
  r.optimizer_loop =
      v.optimizer_loop.value_or(torch1 ? OptimizerLoop::per_tensor : OptimizerLoop::device_default);
}

// --transformers (transformers_release.hpp, hf_release_rules.hpp): the release of Hugging Face's
// modelling code. Lit-GPT's and the CPU runtime's rules are their own code's, so it is refused there;
// before a family's first sdpa release the attention is eager (transformers' default then), and
// sdpa is refused as transformers refuses it.
void resolve_transformers_release(const PlanValues& v, EstimateRequest& r) {
  if (!v.transformers) return;
  if (!runs_transformers_code(r.framework) || r.framework == Framework::torchtune)
    throw Error(Field::transformers, "is Hugging Face's release; " + flag_for(Field::framework) + " " +
                                         to_string(r.framework) + " runs its own model code (expected no " +
                                         flag_for(Field::transformers) + ")");
  if (r.device == Device::cpu)
    throw Error(Field::transformers, to_string(*v.transformers) + " with " + flag_for(Field::device) +
                                         " cpu: the CPU rules are torch 1.13's own models, as measured "
                                         "(expected no " +
                                         flag_for(Field::transformers) + ")");
  r.transformers = *v.transformers;
  if (!r.model.arch) return;
  const std::string& type = r.model.arch->model_type;
  const auto first = detail::hf_first_sdpa(type);
  if (!first || !(r.transformers.value() < first->value())) return;
  if (v.attention == Attention::sdpa)
    throw Error(Field::attention, "sdpa: transformers " + to_string(r.transformers) + " runs " + type +
                                      " with eager attention only (sdpa from " + to_string(*first) +
                                      "; expected eager or a later " + flag_for(Field::transformers) + ")");
  r.attention = Attention::eager;
}

// --bitsandbytes (bitsandbytes_release.hpp): the release of the 4-bit layers a QLoRA step runs.
// Given where no bitsandbytes layer trains it would change nothing, so it is refused there.
void resolve_bitsandbytes_release(const PlanValues& v, EstimateRequest& r) {
  if (!v.bitsandbytes) return;
  const std::string given = to_string(*v.bitsandbytes);
  if (r.mode != Mode::train || !is_nf4(r.quantize))
    throw Error(Field::bitsandbytes, given +
                                         ": it changes what a bitsandbytes 4-bit layer keeps for "
                                         "backward, so it needs a training step with " +
                                         flag_for(Field::quantize) + " nf4 or nf4-dq (expected no " +
                                         flag_for(Field::bitsandbytes) + ")");
  if (r.framework == Framework::torchtune)
    throw Error(Field::bitsandbytes, given + ": " + flag_for(Field::framework) +
                                         " torchtune quantises with torchao's NF4Tensor, not bitsandbytes "
                                         "(expected no " +
                                         flag_for(Field::bitsandbytes) + ")");
  r.bitsandbytes = *v.bitsandbytes;
}

}  // namespace memplan::cli
