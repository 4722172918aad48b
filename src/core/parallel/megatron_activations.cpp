// Activation memory of a Megatron transformer, per Korthikanti et al. 2022 ("Reducing Activation
// Recomputation in Large Transformer Models", arXiv:2205.05198): per layer (Sec. 4.1, Table 2),
// per pipeline stage under 1F1B and interleaving (Sec. 4.2.3), embedding and output layer (Sec. 4.3).
#include "core/parallel/megatron.hpp"

#include <algorithm>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"

namespace memplan {

namespace {

uint64_t mul3_act(uint64_t a, uint64_t b, uint64_t c) {
  return checked_mul(checked_mul(a, b, "activations"), c, "activations");
}

}  // namespace

LayerActivation korthikanti_layer_activation(const TransformerArch& a, const TransformerStep& step,
                                             uint64_t tp, bool sequence_parallel, Checkpointing recompute) {
  if (tp == 0) throw Error(Field::tp, "must be at least 1");
  const uint64_t s = step.seq, b = step.micro_batch, h = a.hidden;
  const uint64_t hd = a.resolved_head_dim();
  const uint64_t heads = a.heads / tp, kv = a.resolved_kv_heads() / tp;
  const uint64_t inner = (a.intermediate ? a.intermediate : 4 * h) / tp;
  const uint64_t s_local = sequence_parallel ? s / tp : s;  // sequence parallel splits the rest along s
  const uint64_t sbh_local = mul3_act(s_local, b, h);
  const ElementCost e = step.activation;

  LayerActivation out;
  // The paper's "10": inputs of both layer norms, of the QKV and fc1 matmuls (4 x 2 bytes) and the
  // two 1-byte dropout masks after attention and MLP.
  out.replicated = bytes_for(checked_mul(4, sbh_local), e, "activations");
  if (step.dropout) out.replicated = checked_add(out.replicated, checked_mul(2, sbh_local));
  // The paper's "24": Q, K, V, the attention-projection input (2 each) and the MLP's inner
  // activations (GeLU input and fc2 input, 8 each); split over tp by heads and MLP columns.
  const uint64_t sb = checked_mul(s, b);
  uint64_t split_elems = checked_mul(sb, checked_mul(2 * heads + 2 * kv, hd));
  uint64_t mlp_elems =
      checked_mul(sb, checked_mul(a.gated_mlp ? 3 : 2, inner));  // SwiGLU: fc1 out (2I) + fc2 in
  if (a.experts) mlp_elems = checked_mul(mlp_elems, a.experts_per_token ? a.experts_per_token : 1);
  split_elems = checked_add(split_elems, mlp_elems);
  out.split = bytes_for(split_elems, e, "activations");
  // The paper's "5as/h": softmax output (2), its dropout mask (1) and dropout output (2), per head
  // s x s. Fused (flash) attention keeps only the fp32 log-sum-exp per row.
  const uint64_t scores = checked_mul(mul3_act(heads, s, s), b, "attention scores");
  if (step.attention == Attention::sdpa) {
    out.scores = checked_mul(4, mul3_act(heads, s, b));
  } else {
    out.scores = bytes_for(scores, e, "attention scores");
    if (step.dropout) out.scores = checked_add(checked_add(out.scores, scores), bytes_for(scores, e));
  }
  switch (recompute) {
    case Checkpointing::none:
      out.total = checked_add(checked_add(out.replicated, out.split), out.scores);
      break;
    case Checkpointing::selective:
      out.total = checked_add(out.replicated, out.split);
      break;
    case Checkpointing::full:
      out.total = bytes_for(sbh_local, e, "activations");
      break;  // the layer input
  }
  return out;
}

uint64_t pipeline_in_flight(uint64_t pp, uint64_t stage, uint64_t virtual_stages, uint64_t micro_batches) {
  if (pp == 0 || stage >= pp) throw Error(Field::pp, "pipeline stage out of range");
  uint64_t in_flight;
  uint64_t cap = micro_batches;
  if (virtual_stages <= 1) {
    in_flight = pp - stage;  // 1F1B: stage k has pp - k micro-batches' activations waiting
  } else {
    // Megatron's interleaved schedule: warm-up 2(pp - k - 1) + (v - 1)pp chunk micro-batches, + 1.
    in_flight = checked_add(2 * (pp - stage - 1), checked_mul(virtual_stages - 1, pp)) + 1;
    if (cap) cap = checked_mul(cap, virtual_stages);
  }
  return cap ? std::min(in_flight, cap) : in_flight;
}

uint64_t megatron_stage_activation_bytes(const TransformerArch& a, const TransformerStep& step,
                                         const ParallelLayout& layout, uint64_t stage) {
  const uint64_t tp = layout.tp, pp = layout.pp, v = layout.virtual_stages ? layout.virtual_stages : 1;
  const LayerActivation layer =
      korthikanti_layer_activation(a, step, tp, layout.sequence_parallel, layout.recompute);
  const uint64_t layers_per_chunk = a.layers / (pp * v);
  const uint64_t chunks = pipeline_in_flight(pp, stage, v, layout.micro_batches);
  uint64_t bytes =
      checked_mul(checked_mul(chunks, layers_per_chunk, "layers in flight"), layer.total, "activations");

  const uint64_t s_local = layout.sequence_parallel ? step.seq / tp : step.seq;
  const uint64_t sbh_local = mul3_act(s_local, step.micro_batch, a.hidden);
  if (stage == 0 && step.dropout) {
    // Embedding dropout mask, 1 byte per element, for each micro-batch in flight (the paper's sbhp/t).
    const uint64_t micro = pipeline_in_flight(pp, 0, 1, layout.micro_batches);
    bytes = checked_add(bytes, checked_mul(sbh_local, micro, "activations"));
  }
  if (stage + 1 == pp) {
    // Output layer, one micro-batch: final-norm input and projection input (2 bytes each) and the
    // fp32 logits of the vocabulary-parallel cross entropy: 4sbh/t (1 + v/h).
    const uint64_t vocab = megatron_padded_vocab(a.vocab, step.vocab_multiple, tp) / tp;
    bytes = checked_add(bytes, bytes_for(checked_mul(2, sbh_local), step.activation, "activations"));
    bytes = checked_add(bytes, checked_mul(4, mul3_act(step.seq, step.micro_batch, vocab)), "activations");
  }
  return bytes;
}

}  // namespace memplan
