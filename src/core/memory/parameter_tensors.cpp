#include "core/memory/parameter_tensors.hpp"

#include "core/base/checked.hpp"

namespace memplan {

uint64_t TensorShape::elements() const { return cols ? checked_mul(rows, cols, "tensor") : rows; }

std::vector<TensorShape> ParameterShapes::in_order() const {
  std::vector<TensorShape> out(before);
  for (uint64_t l = 0; l < layers; ++l) out.insert(out.end(), layer.begin(), layer.end());
  out.insert(out.end(), after.begin(), after.end());
  return out;
}

ParameterShapes parameter_shapes(const ModelSpec& m) {
  ParameterShapes p;
  if (!m.mlp_widths.empty()) {
    for (size_t i = 0; i + 1 < m.mlp_widths.size(); ++i) {
      p.before.push_back({m.mlp_widths[i + 1], m.mlp_widths[i]});
      p.before.push_back({m.mlp_widths[i + 1], 0});
    }
    return p;
  }
  if (!m.arch) return p;
  const TransformerArch& a = *m.arch;
  const uint64_t h = a.hidden;
  const uint64_t hd = a.resolved_head_dim();
  const uint64_t qd = checked_mul(a.heads, hd, "tensor");
  const uint64_t kvd = checked_mul(a.resolved_kv_heads(), hd, "tensor");
  const uint64_t ff = a.intermediate ? a.intermediate : checked_mul(4, h, "tensor");
  const uint64_t norm_tensors = a.norm == "rmsnorm" ? 1 : 2;  // weight (and bias)
  auto linear = [&](uint64_t in, uint64_t out) {
    p.layer.push_back({out, in});
    if (a.bias) p.layer.push_back({out, 0});
  };
  if (a.vocab) p.before.push_back({a.vocab, h});
  if (a.position_embedding == "learned" && a.max_positions) p.before.push_back({a.max_positions, h});
  if (!a.norm_first)
    for (uint64_t i = 0; i < norm_tensors; ++i) p.before.push_back({h, 0});
  if (a.fused_qkv) {
    linear(h, qd + 2 * kvd);
  } else {
    linear(h, qd);
    linear(h, kvd);
    linear(h, kvd);
  }
  linear(qd, h);
  for (uint64_t i = 0; i < 2 * norm_tensors; ++i) p.layer.push_back({h, 0});
  if (a.gated_mlp) linear(h, ff);
  linear(h, ff);
  linear(ff, h);
  p.layers = a.layers;
  if (a.final_norm)
    for (uint64_t i = 0; i < norm_tensors; ++i) p.after.push_back({h, 0});
  if (a.vocab && a.causal && !a.tied_embeddings) p.after.push_back({a.vocab, h});
  if (!a.causal) p.after.push_back({h, h});  // an encoder's pooler
  return p;
}

}  // namespace memplan
