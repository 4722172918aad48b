#include "core/memory/factored_state.hpp"

#include <cmath>

#include "core/base/checked.hpp"

namespace memplan {
namespace {

struct Matrices {
  uint64_t sum_rc = 0;    // sum of rows + cols
  uint64_t elements = 0;  // sum of rows x cols
  void add(uint64_t rows, uint64_t cols, uint64_t count = 1) {
    sum_rc = checked_add(sum_rc, checked_mul(rows + cols, count));
    elements = checked_add(elements, checked_mul(checked_mul(rows, cols), count));
  }
};

Matrices transformer_matrices(const TransformerArch& a) {
  Matrices m;
  const uint64_t h = a.hidden, hd = a.resolved_head_dim(), q = a.heads * hd, kv = a.resolved_kv_heads() * hd;
  const uint64_t experts = a.experts ? a.experts : 1;
  const uint64_t ff = a.intermediate ? a.intermediate : 4 * h;
  for (uint64_t l = 0; l < a.layers; ++l) {
    if (a.fused_qkv) {  // one matrix (GPT-2's c_attn): its rows and columns once
      m.add(h, q + 2 * kv);
    } else {
      m.add(h, q);
      m.add(h, kv, 2);
    }
    m.add(q, h);
    m.add(h, ff, (a.gated_mlp ? 2 : 1) * experts);
    m.add(ff, h, experts);
    if (a.experts) m.add(h, a.experts);
  }
  m.add(a.vocab, h, a.causal && !a.tied_embeddings ? 2 : 1);  // the embedding (and an untied LM head)
  if (a.position_embedding == "learned" && a.max_positions) m.add(a.max_positions, h);
  return m;
}

}  // namespace

FactoredState factored_state_elements(const ModelSpec& model) {
  const uint64_t p = model.parameters;
  if (!model.mlp_widths.empty()) {  // each layer's weight matrix factored, its bias in full
    Matrices m;
    for (size_t i = 0; i + 1 < model.mlp_widths.size(); ++i)
      m.add(model.mlp_widths[i + 1], model.mlp_widths[i]);
    const uint64_t vectors = p > m.elements ? p - m.elements : 0;
    return {m.sum_rc + vectors, FactoredShapes::architecture, vectors};
  }
  if (model.arch && model.arch->layers && model.arch->hidden) {
    Matrices m = transformer_matrices(*model.arch);
    const uint64_t vectors = p > m.elements ? p - m.elements : 0;
    return {m.sum_rc + vectors, FactoredShapes::architecture, vectors};
  }
  if (model.tensors) {
    const double side = std::sqrt(static_cast<double>(p) / static_cast<double>(model.tensors));
    const uint64_t e = checked_mul(model.tensors, static_cast<uint64_t>(std::ceil(2 * side)));
    return {e, FactoredShapes::square, model.tensors};
  }
  const uint64_t width = 4096;
  return {2 * (p / width) + width, FactoredShapes::width4096, 0};
}

}  // namespace memplan
