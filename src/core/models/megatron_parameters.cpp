// Megatron-LM's split of a transformer's parameters over tensor-parallel ranks and pipeline stages.
#include "core/parallel/megatron.hpp"

#include <memplan/error.hpp>
#include "core/base/checked.hpp"
#include "core/models/parameter_count.hpp"

namespace memplan {

uint64_t megatron_padded_vocab(uint64_t vocab, uint64_t vocab_multiple, uint64_t tp) {
  const uint64_t m = checked_mul(vocab_multiple ? vocab_multiple : 1, tp ? tp : 1, "vocab multiple");
  return checked_mul((vocab + m - 1) / m, m, "padded vocabulary");
}

uint64_t megatron_layer_parameters(const TransformerArch& a, const TransformerStep& step, uint64_t tp) {
  if (tp == 0) throw Error(Field::tp, "must be at least 1");
  // Megatron's layer: two norms, and biases on every Linear or on none (step.linear_biases).
  ParameterLayout layout = layout_of(a);
  layout.qkv_bias = layout.out_bias = layout.mlp_bias = step.linear_biases;
  layout.norms_per_layer = 2;
  const LayerParameters p = count_layer_parameters(a, layout, a.experts);
  // Column- and row-parallel matrices and the column-parallel biases are divided over tp; the
  // norms, the row-parallel biases and the MoE router are replicated on every tp rank.
  const uint64_t split = checked_add(checked_add(p.attention, p.mlp), p.column_biases);
  const uint64_t replicated = checked_add(checked_add(p.norms, p.row_biases), p.router);
  return checked_add(split / tp + (split % tp ? 1 : 0), replicated);
}

std::vector<uint64_t> megatron_stage_parameters(const TransformerArch& a, const TransformerStep& step,
                                                uint64_t tp, uint64_t pp) {
  if (pp == 0 || a.layers % pp != 0) throw Error(Field::pp, "layers must divide evenly over pipeline stages");
  const uint64_t per_layer = megatron_layer_parameters(a, step, tp);
  const uint64_t layers = a.layers / pp;
  std::vector<uint64_t> stages(pp, checked_mul(per_layer, layers, "stage parameters"));
  const uint64_t vocab_shard =
      checked_mul(megatron_padded_vocab(a.vocab, step.vocab_multiple, tp), a.hidden) / tp;
  // First stage: word embeddings (vocab-parallel) and learned positions (replicated).
  stages.front() = checked_add(stages.front(), vocab_shard);
  stages.front() = checked_add(stages.front(), checked_mul(step.position_rows, a.hidden));
  // Last stage: final norm, and the output layer (untied, or Megatron's copy of tied embeddings).
  stages.back() = checked_add(stages.back(), norm_parameters(a));
  if (pp > 1 || !a.tied_embeddings) stages.back() = checked_add(stages.back(), vocab_shard);
  return stages;
}

}  // namespace memplan
