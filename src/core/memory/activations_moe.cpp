// Activations of a mixture-of-experts layer besides the experts' own MLP tensors (which
// mlp_core counts over k routed experts plus the shared ones): the router and the dispatch of
// tokens to experts. Hugging Face transformers 5.24.0 (models/mixtral/modeling_mixtral.py
// MixtralTopKRouter, models/qwen2_moe and models/olmoe alike; integrations/moe.py
// grouped_mm_experts_forward, the default experts path), measured with saved_tensors_hooks on
// CPU (bench/frameworks/measure_saved.py):
//   router      softmax(router_logits.float()) keeps its fp32 output (tokens x experts) and
//               topk its int64 indices (tokens x k); Mixtral divides the top-k weights by their
//               sum (keeps the sum and the weights, fp32).
//   dispatch    the token and expert order (three int64 per routed token), the gathered copy of
//               each routed token's input (the grouped matmul's input), the expert down output
//               and the routing weight it is multiplied by (both kept by that multiply).
//   shared      Qwen2-MoE's shared expert: sigmoid(shared_expert_gate(x)) and the shared expert's
//               output, kept by their product.
//   LoRA        frozen experts keep no gathered input; the rest stays (the routing weights'
//               multiply still needs both operands for the adapters' gradients).
//   autocast    torch._grouped_mm and F.grouped_mm have no autocast kernel (torch 2.15's
//               aten/src/ATen/autocast_mode.h lists neither; integrations/moe.py's _grouped_mm
//               says so and casts the input to the weight's dtype), so under autocast the routed
//               experts read the fp32 residual stream with fp32 master weights: their gathered
//               input, projections, activation and down output are fp32, and autocast makes no
//               copy of their input or weights. The router, Qwen2-MoE's shared expert and its
//               gate are nn.Linear and autocast as usual (one half input copy and weight copy each).
//               Measured with bench/frameworks/cuda_autocast.py (CUDA's cast lists on the CPU).

#include "core/base/checked.hpp"
#include "core/memory/activation_ledger.hpp"
#include "core/memory/transformer_layer_model.hpp"

namespace memplan {
namespace detail {

const Fmt& LayerModel::experts_fmt() const {
  if (m_arch.experts > 0 && m_opts.autocast && !m_opts.litgpt && m_opts.runtime != Runtime::cpu_torch113)
    return m_res;
  return m_act;
}

bool LayerModel::experts_uncast() const { return experts_fmt().name != m_act.name; }

uint64_t LayerModel::mlp_linear_calls() const {
  if (!experts_uncast()) return m_arch.gated_mlp ? 2 : 1;
  const bool shared = m_arch.shared_intermediate > 0;
  return 1 + (shared ? 2 : 0) + (shared && m_arch.model_type == "qwen2_moe" ? 1 : 0);
}

uint64_t LayerModel::mlp_weight_elements() const {
  const Shape& d = m_shape;
  if (!experts_uncast())
    return checked_mul(m_arch.gated_mlp ? 3 : 2, checked_mul(d.h, d.ff, "weights"), "weights");
  const uint64_t shared = m_arch.shared_intermediate;
  uint64_t n = checked_mul(d.h, m_arch.experts, "weights");  // the router
  n = checked_add(n, checked_mul(3, checked_mul(d.h, shared, "weights"), "weights"), "weights");
  if (shared > 0 && m_arch.model_type == "qwen2_moe")
    n = checked_add(n, d.h, "weights");  // shared expert gate
  return n;
}

void LayerModel::moe_routing(Entries& e, bool frozen) const {
  if (m_arch.experts == 0) return;
  const Shape& d = m_shape;
  const uint64_t k = m_arch.experts_per_token ? m_arch.experts_per_token : 1;
  const Fmt i64{"int64", {8, 1}};
  const bool mixtral = m_arch.model_type == "mixtral";
  const Fmt& ex = experts_fmt();
  add_entry(e, "router softmax probabilities", {d.s, m_arch.experts}, detail::fp32_fmt());
  add_entry(e, "top-k expert indices", {d.s, k}, i64);
  if (mixtral) {
    add_entry(e, "top-k weights' sum (Mixtral normalises them)", {d.s, 1}, detail::fp32_fmt());
    add_entry(e, "normalised top-k weights", {d.s, k}, detail::fp32_fmt());
  }
  add_entry(e, "token and expert order (3 indices per routed token)", {d.s, checked_mul(3, k, "moe")}, i64);
  if (!frozen)  // frozen experts (LoRA) keep no input for their weights' gradient
    add_entry(e, "routed tokens' inputs (gathered copy, the experts' input)",
              {d.s, checked_mul(k, d.h, "moe")}, ex);
  add_entry(e, "routing weight per routed token", {d.s, k}, mixtral ? detail::fp32_fmt() : m_act);
  add_entry(e, "experts' down output (kept by the routing-weight multiply)",
            {d.s, checked_mul(k, d.h, "moe")}, ex);
  if (m_arch.shared_intermediate > 0 && m_arch.model_type == "qwen2_moe") {
    add_entry(e, "shared expert gate sigmoid", {d.s, 1}, m_act);
    add_entry(e, "shared expert output (kept by the gate multiply)", {d.s, d.h}, m_act);
  }
}

}  // namespace detail
}  // namespace memplan
