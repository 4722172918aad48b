#include "core/models/block_parameters.hpp"

#include <memplan/error.hpp>
#include "core/base/checked.hpp"

namespace memplan {
namespace {

// Accumulates elements and tensors, overflow-checked.
struct Counter {
  BlockParameters total;
  void add(uint64_t rows, uint64_t cols = 1, uint64_t times = 1) {
    uint64_t n = checked_mul(checked_mul(rows, cols, "parameters"), times, "parameters");
    total.parameters = checked_add(total.parameters, n, "parameters");
    total.tensors = checked_add(total.tensors, times, "parameter tensors");
  }
  // A Linear in -> out (with its bias when `bias`), `times` instances.
  void linear(uint64_t in, uint64_t out, bool bias, uint64_t times = 1) {
    add(in, out, times);
    if (bias) add(out, 1, times);
  }
};

}  // namespace

BlockParameters count_block_parameters(const TransformerArch& a) {
  if (a.layers == 0 || a.hidden == 0 || a.heads == 0)
    throw Error("architecture", "layers, hidden size and heads are needed to count parameters");
  const uint64_t h = a.hidden, qd = a.heads * a.resolved_head_dim(),
                 kvd = a.resolved_kv_heads() * a.resolved_head_dim();
  const uint64_t ff = a.intermediate ? a.intermediate : 4 * h;
  const bool rms = a.norm == "rmsnorm";
  Counter layer;
  auto norm = [&](Counter& c) {
    c.add(h);
    if (!rms) c.add(h);
  };
  norm(layer);
  if (a.fused_qkv) {
    layer.linear(h, qd + 2 * kvd, a.bias);
  } else {
    layer.linear(h, qd, a.bias);
    layer.linear(h, kvd, a.bias, 2);
  }
  layer.linear(qd, h, a.bias);
  norm(layer);
  uint64_t experts = a.experts ? a.experts : 1;
  layer.linear(h, ff, a.bias, (a.gated_mlp ? 2 : 1) * experts);
  layer.linear(ff, h, a.bias, experts);
  if (a.experts) layer.add(h, a.experts);  // router

  Counter model;
  model.total.parameters = checked_mul(layer.total.parameters, a.layers, "parameters");
  model.total.tensors = checked_mul(layer.total.tensors, a.layers, "parameter tensors");
  if (a.vocab > 0) {
    model.add(a.vocab, h);
    if (a.position_embedding == "learned") model.add(a.max_positions, h);
    if (!a.norm_first) norm(model);  // embedding norm (BERT)
  }
  if (a.final_norm) norm(model);
  if (a.vocab > 0 && a.causal && !a.tied_embeddings) model.add(a.vocab, h);
  return model.total;
}

}  // namespace memplan
