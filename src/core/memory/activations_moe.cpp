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

#include "core/base/checked.hpp"
#include "core/memory/activation_ledger.hpp"
#include "core/memory/transformer_layer_model.hpp"

namespace memplan {
namespace detail {

void LayerModel::moe_routing(Entries& e, bool frozen) const {
  if (m_arch.experts == 0) return;
  const Shape& d = m_shape;
  const uint64_t k = m_arch.experts_per_token ? m_arch.experts_per_token : 1;
  const Fmt i64{"int64", {8, 1}};
  const bool mixtral = m_arch.model_type == "mixtral";
  add_entry(e, "router softmax probabilities", {d.s, m_arch.experts}, detail::fp32_fmt());
  add_entry(e, "top-k expert indices", {d.s, k}, i64);
  if (mixtral) {
    add_entry(e, "top-k weights' sum (Mixtral normalises them)", {d.s, 1}, detail::fp32_fmt());
    add_entry(e, "normalised top-k weights", {d.s, k}, detail::fp32_fmt());
  }
  add_entry(e, "token and expert order (3 indices per routed token)", {d.s, checked_mul(3, k, "moe")}, i64);
  if (!frozen)  // frozen experts (LoRA) keep no input for their weights' gradient
    add_entry(e, "routed tokens' inputs (gathered copy, the experts' input)",
              {d.s, checked_mul(k, d.h, "moe")}, m_act);
  add_entry(e, "routing weight per routed token", {d.s, k}, mixtral ? detail::fp32_fmt() : m_act);
  add_entry(e, "experts' down output (kept by the routing-weight multiply)",
            {d.s, checked_mul(k, d.h, "moe")}, m_act);
  if (m_arch.shared_intermediate > 0 && m_arch.model_type == "qwen2_moe") {
    add_entry(e, "shared expert gate sigmoid", {d.s, 1}, m_act);
    add_entry(e, "shared expert output (kept by the gate multiply)", {d.s, d.h}, m_act);
  }
}

}  // namespace detail
}  // namespace memplan
