// llama.cpp's own fit of the parameters the user left unset (see llamacpp_fit.hpp).
#include "core/serving/llamacpp_fit.hpp"

#include <algorithm>

#include <memplan/error.hpp>

namespace memplan {
namespace {

constexpr int64_t k_mib_fit = 1ll << 20;

// What llama.cpp's dry run counts on each GPU: model, context (the KV cache) and compute buffers.
std::vector<int64_t> used_per_gpu(const LlamaCppPlan& p) {
  std::vector<int64_t> out;
  for (const LlamaCppDevice& d : p.gpus) out.push_back(static_cast<int64_t>(d.model + d.kv + d.compute));
  return out;
}

std::string mib_text(int64_t bytes) { return std::to_string(bytes / k_mib_fit) + " MiB"; }

LlamaCppPlan plan_with(LlamaCppRequest r, uint64_t ngl) {
  r.n_gpu_layers = ngl;
  return plan_llamacpp(r);
}

}  // namespace

LlamaCppFit llamacpp_fit(const LlamaCppRequest& req, const LlamaCppFitOptions& opt) {
  LlamaCppFit f;
  f.request = req;
  LlamaCppRequest& r = f.request;
  const size_t nd = r.gpu_bytes.size();
  if (nd == 0) {
    f.steps.push_back("no GPU: nothing to fit");
    return f;
  }
  if (!opt.ctx_set) {
    if (!opt.n_ctx_train)
      throw Error("llama.cpp fit", "the model's training context is unknown: give the context length");
    r.n_ctx = opt.n_ctx_train;
  }
  const uint64_t layers = r.arch.layers;
  const int64_t margin = static_cast<int64_t>(opt.margin_bytes);
  std::vector<int64_t> free(nd);
  for (size_t i = 0; i < nd; ++i)
    free[i] = static_cast<int64_t>(r.gpu_bytes[i]) - static_cast<int64_t>(r.reserve_bytes);

  // Step 1: every layer offloaded (or the user's -ngl).
  const uint64_t ngl0 = opt.ngl_set && r.n_gpu_layers ? *r.n_gpu_layers : layers + 1;
  const LlamaCppPlan full = plan_with(r, ngl0);
  const std::vector<int64_t> used = used_per_gpu(full);
  int64_t sum_free = 0, min_free = INT64_MAX, sum_ctx = 0;
  for (size_t i = 0; i < nd; ++i) {
    sum_free += free[i] - used[i];
    min_free = std::min(min_free, free[i] - used[i]);
    sum_ctx += static_cast<int64_t>(full.gpus[i].kv);
  }
  f.steps.push_back("with -c " + std::to_string(r.n_ctx) + " and -ngl " + std::to_string(ngl0) +
                    ": the GPUs keep " + mib_text(min_free) + " free at least (margin " + mib_text(margin) +
                    ")");
  if (min_free >= margin) {
    r.n_gpu_layers = ngl0;
    f.steps.push_back("no changes needed");
    return f;
  }

  // Step 2: a shorter context, when the user set none.
  int64_t surplus = sum_free - static_cast<int64_t>(nd) * margin;
  int64_t reduction_vs_full = 0;
  if (surplus < 0) {
    if (!opt.ctx_set && opt.n_ctx_train > opt.n_ctx_min && sum_ctx > 0) {
      const int64_t per_ctx = sum_ctx / static_cast<int64_t>(opt.n_ctx_train);
      if (per_ctx > 0) {
        const uint64_t cut = std::min<uint64_t>(static_cast<uint64_t>((-surplus + per_ctx - 1) / per_ctx),
                                                opt.n_ctx_train - opt.n_ctx_min);
        r.n_ctx = opt.n_ctx_train - cut;
        reduction_vs_full = static_cast<int64_t>(cut) * per_ctx;
        surplus += reduction_vs_full;
        f.changed = true;
        f.steps.push_back("context reduced from " + std::to_string(opt.n_ctx_train) + " to " +
                          std::to_string(r.n_ctx) + " (" + mib_text(reduction_vs_full) + " less)");
      }
    } else if (opt.ctx_set) {
      f.steps.push_back("context size set by user to " + std::to_string(r.n_ctx) + ": no change");
    }
  }
  if (surplus > 0) {
    r.n_gpu_layers = ngl0;
    f.steps.push_back("the whole model fits across the GPUs with the shorter context");
    return f;
  }
  // Step 3: what the user set stops the fit (its exception is caught: llama.cpp goes on with them).
  auto stop = [&](const std::string& why) {
    f.failure = why;
    r.n_gpu_layers = ngl0;
    f.steps.push_back("failed to fit params to free device memory: " + why);
    return f;
  };
  if (opt.ngl_set) return stop("n_gpu_layers already set by user to " + std::to_string(ngl0) + ", abort");
  if (nd > 1 && opt.split_set) return stop("model_params::tensor_split already set by user, abort");
  if (nd > 1 && layers < 2 * nd)
    return stop("model has only " + std::to_string(layers) + " layers but need at least " +
                std::to_string(2 * nd) + " to fit memory for " + std::to_string(nd) + " devices, abort");
  if (r.n_cpu_moe) return stop("model_params::tensor_buft_overrides already set by user, abort");

  // Step 4: MoE on one GPU, experts of the first layers to the CPU.
  if (r.arch.experts > 1) {
    if (nd > 1) return stop("several GPUs with an MoE model (llama.cpp's step 3b) are not modelled");
    LlamaCppRequest all_cpu = r;
    all_cpu.n_cpu_moe = layers;
    const LlamaCppPlan moe = plan_with(all_cpu, layers + 1);
    const int64_t moe_used = used_per_gpu(moe)[0];
    const int64_t moe_surplus = free[0] - moe_used - margin;
    if (moe_surplus >= 0) {
      const uint64_t dense = r.arch.dense_layers;
      const int64_t projected_full = used[0] - reduction_vs_full;
      const int64_t per_layer = (projected_full - moe_used) / static_cast<int64_t>(layers - dense);
      const uint64_t full_layers = std::min<uint64_t>(
          per_layer > 0 ? static_cast<uint64_t>(moe_surplus / per_layer) + dense + 1 : layers + 1,
          layers + 1);
      r.n_cpu_moe = layers + 1 - full_layers;
      r.n_gpu_layers = layers + 1;
      f.changed = true;
      f.steps.push_back("experts of the first " + std::to_string(r.n_cpu_moe) + " layers to the CPU (" +
                        std::to_string(full_layers) + " full layers on the GPU)");
      return f;
    }
    f.steps.push_back("with only the dense weights on the GPU there is still a deficit of " +
                      mib_text(-moe_surplus));
  }

  // Step 5: every layer alike: extrapolate the layers each GPU holds.
  const uint64_t per_dev = std::max<uint64_t>(layers / nd, 2);
  LlamaCppRequest one = r, many = r;
  one.tensor_split.assign(nd, 1.0);
  many.tensor_split.assign(nd, static_cast<double>(per_dev));
  const std::vector<int64_t> m1 = used_per_gpu(plan_with(one, nd));
  const std::vector<int64_t> mn = used_per_gpu(plan_with(many, per_dev * nd));
  uint64_t ngl = 0;
  for (size_t i = 0; i < nd; ++i) {
    const int64_t per_layer = (mn[i] - m1[i]) / static_cast<int64_t>(per_dev - 1);
    const int64_t base = m1[i] - per_layer;
    const int64_t n = per_layer > 0 ? (free[i] - margin - base) / per_layer : 0;
    ngl += static_cast<uint64_t>(std::max<int64_t>(n, 0));
  }
  r.n_gpu_layers = std::min(ngl, layers + 1);
  r.tensor_split = many.tensor_split;  // the split of the last measurement stays (equal shares)
  if (nd == 1) r.tensor_split.clear();
  f.changed = true;
  f.steps.push_back("set n_gpu_layers to " + std::to_string(*r.n_gpu_layers));
  return f;
}

}  // namespace memplan
