// The inference split: which weights tensor parallelism divides and which it copies.
#include "core/parallel/inference_split.hpp"

#include <algorithm>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"

namespace memplan {
namespace {

uint64_t mul_params(uint64_t a, uint64_t b) { return checked_mul(a, b, "parameters"); }

}  // namespace

InferenceSplit inference_split(const ModelSpec& model, uint64_t tp, uint64_t pp) {
  if (!model.arch)
    throw Error(Field::tp,
                "splitting a model across GPUs needs its architecture (a preset or a config.json)");
  if (tp == 0) throw Error(Field::tp, "\"0\" is not a tensor-parallel size (expected at least 1)");
  if (pp == 0) throw Error(Field::pp, "\"0\" is not a number of pipeline stages (expected at least 1)");
  const TransformerArch& a = *model.arch;
  const uint64_t heads = a.heads, kvh = a.resolved_kv_heads(), hd = a.resolved_head_dim();
  const uint64_t ff = a.intermediate ? a.intermediate : mul_params(4, a.hidden);
  if (heads == 0 || hd == 0 || a.hidden == 0 || a.layers == 0)
    throw Error(Field::tp, "the architecture lacks layers, heads or the hidden size");
  if (heads % tp)
    throw Error(Field::tp, std::to_string(tp) + " does not divide the " + std::to_string(heads) +
                               " attention heads (each GPU takes heads / tp)");
  if (ff % tp)
    throw Error(Field::tp, std::to_string(tp) + " does not divide the MLP width " + std::to_string(ff));
  if (kvh < tp ? tp % kvh : kvh % tp)
    throw Error(Field::tp, std::to_string(tp) + " and the " + std::to_string(kvh) +
                               " KV heads do not divide one another");
  if (pp > a.layers)
    throw Error(Field::pp, std::to_string(pp) + " stages for " + std::to_string(a.layers) + " layers");

  InferenceSplit s;
  s.tp = tp;
  s.pp = pp;
  s.layers_per_gpu = ceil_div(a.layers, pp);
  s.kv_heads_per_gpu = std::max<uint64_t>(1, kvh / tp);
  s.kv_replicas = tp > kvh ? tp / kvh : 1;
  s.heads_per_gpu = heads / tp;
  s.intermediate_per_gpu = ff / tp;
  const uint64_t vocab_padded = ceil_div(a.vocab, k_vocab_padding) * k_vocab_padding;
  s.vocab_per_gpu = ceil_div(vocab_padded, tp);

  // One layer: q and o (heads x head_dim x hidden each), k and v (kv_heads x head_dim x hidden
  // each), the MLP (2 or 3 matrices of hidden x width). A mixture of experts holds `experts`
  // routed MLPs of expert_intermediate (Qwen3-30B-A3B: 128 x 768, where intermediate_size 6144 is
  // the dense width), the shared experts' MLP, and dense_layers layers of a dense MLP; the router
  // is replicated. vLLM splits every expert's width by tp (FusedMoE without expert parallelism).
  const uint64_t mats = a.gated_mlp ? 3 : 2;
  uint64_t mlp = mul_params(mats, mul_params(a.hidden, ff));  // a dense layer's
  uint64_t dense_mlp = mlp;
  if (a.experts) {
    const uint64_t width = a.expert_intermediate ? a.expert_intermediate : ff;
    if (width % tp)
      throw Error(Field::tp,
                  std::to_string(tp) + " does not divide the expert width " + std::to_string(width));
    mlp = checked_add(mul_params(a.experts, mul_params(mats, mul_params(a.hidden, width))),
                      mul_params(mats, mul_params(a.hidden, a.shared_intermediate)), "parameters");
    dense_mlp = mul_params(mats, mul_params(a.hidden, a.dense_intermediate ? a.dense_intermediate : ff));
  }
  const uint64_t dense_layers = a.experts ? std::min(a.dense_layers, a.layers) : 0;
  const uint64_t q_o = mul_params(2, mul_params(mul_params(heads, hd), a.hidden));
  const uint64_t k_v = mul_params(2, mul_params(mul_params(kvh, hd), a.hidden));
  const uint64_t layer = checked_add(checked_add(q_o, k_v), mlp, "parameters");
  const uint64_t dense_layer = checked_add(checked_add(q_o, k_v), dense_mlp, "parameters");
  const uint64_t embed = mul_params(a.vocab, a.hidden);
  const uint64_t head = a.tied_embeddings ? 0 : embed;
  const uint64_t all_layers = checked_add(mul_params(a.layers - dense_layers, layer),
                                          mul_params(dense_layers, dense_layer), "parameters");
  s.sharded_parameters = checked_add(all_layers, checked_add(embed, head), "parameters");
  s.replicated_parameters =
      model.parameters > s.sharded_parameters ? model.parameters - s.sharded_parameters : 0;

  // Per GPU: its share of every split matrix; K and V hold kv_heads_per_gpu heads, so a
  // replicated head counts on each GPU that holds it.
  const uint64_t attn_gpu =
      q_o / tp + mul_params(2, mul_params(mul_params(s.kv_heads_per_gpu, hd), a.hidden));
  const uint64_t layer_gpu = attn_gpu + mlp / tp, dense_layer_gpu = attn_gpu + dense_mlp / tp;
  const uint64_t embed_gpu = mul_params(s.vocab_per_gpu, a.hidden);
  uint64_t ends = 0;  // embedding and lm_head on the most-loaded stage
  if (pp == 1)
    ends = embed_gpu + (a.tied_embeddings ? 0 : embed_gpu);
  else
    ends = embed_gpu;  // the first stage holds the embedding, the last the lm_head (or a tied copy)
  const uint64_t replicated_gpu = checked_mul_ratio(s.replicated_parameters, s.layers_per_gpu, a.layers);
  // With stages, the most-loaded one holds layers_per_gpu layers of the larger kind.
  const uint64_t layers_gpu = pp == 1 ? checked_add(mul_params(a.layers - dense_layers, layer_gpu),
                                                    mul_params(dense_layers, dense_layer_gpu), "parameters")
                                      : mul_params(s.layers_per_gpu, std::max(layer_gpu, dense_layer_gpu));
  s.parameters_per_gpu =
      checked_add(checked_add(layers_gpu, ends, "parameters"), replicated_gpu, "parameters");
  if (tp == 1 && pp == 1) s.parameters_per_gpu = model.parameters;  // exactly the model, padding aside
  return s;
}

uint64_t weight_bytes_per_gpu(uint64_t bytes, uint64_t parameters, const InferenceSplit& split) {
  if (parameters == 0) return 0;
  return checked_mul_ratio(bytes, split.parameters_per_gpu, parameters, "weight bytes");
}

}  // namespace memplan
