// Megatron-LM's split of a transformer's parameters over tensor-parallel ranks and pipeline stages.
#include "core/parallel/megatron.hpp"

#include <memplan/error.hpp>
#include "core/base/checked.hpp"

namespace memplan {

namespace {

uint64_t mlp_width(const TransformerArch& a) { return a.intermediate ? a.intermediate : 4 * a.hidden; }

uint64_t norm_parameters(const TransformerArch& a) {
  return a.norm == "rmsnorm" ? a.hidden : 2 * a.hidden;  // LayerNorm: weight and bias
}

}  // namespace

uint64_t megatron_padded_vocab(uint64_t vocab, uint64_t vocab_multiple, uint64_t tp) {
  const uint64_t m = checked_mul(vocab_multiple ? vocab_multiple : 1, tp ? tp : 1, "vocab multiple");
  return checked_mul((vocab + m - 1) / m, m, "padded vocabulary");
}

uint64_t megatron_layer_parameters(const TransformerArch& a, const TransformerStep& step, uint64_t tp) {
  if (tp == 0) throw Error(Field::tp, "must be at least 1");
  const uint64_t h = a.hidden;
  const uint64_t hd = a.resolved_head_dim();
  const uint64_t q_out = checked_mul(a.heads, hd);
  const uint64_t kv_out = checked_mul(2 * a.resolved_kv_heads(), hd);
  const uint64_t inner = mlp_width(a);
  const uint64_t experts = a.experts ? a.experts : 1;
  const uint64_t fc1_out = checked_mul(a.gated_mlp ? 2 * inner : inner, experts);

  // Column- and row-parallel matrices: divided over tp.
  uint64_t split = checked_mul(h, q_out + kv_out);                               // QKV
  split = checked_add(split, checked_mul(q_out, h));                             // attention output
  split = checked_add(split, checked_mul(h, fc1_out));                           // fc1 (gate + up)
  split = checked_add(split, checked_mul(checked_mul(inner, h), experts));       // fc2
  if (step.linear_biases) split = checked_add(split, q_out + kv_out + fc1_out);  // column-parallel biases
  // Replicated on every tp rank: norms, row-parallel biases, the MoE router.
  uint64_t replicated = 2 * norm_parameters(a);
  if (step.linear_biases) replicated = checked_add(replicated, checked_mul(h, 1 + experts));
  if (a.experts) replicated = checked_add(replicated, checked_mul(h, a.experts));
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
