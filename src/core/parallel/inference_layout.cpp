// --mode infer with --tp/--pp: the most-loaded GPU's weights, KV cache and working buffer.
#include <memplan/error.hpp>
#include <memplan/estimate.hpp>
#include <memplan/request.hpp>
#include "core/memory/kv_cache.hpp"
#include "core/models/arch_layout.hpp"
#include "core/parallel/inference_split.hpp"

namespace memplan {
namespace {

void set_bytes(Term& t, uint64_t bytes) {
  if (bytes != t.bytes) {
    Line l{};
    l.code = LineCode::most_loaded;
    l.bytes = bytes;
    l.n[0] = t.bytes;
    t.add(l);
  }
  t.bytes = bytes;
}

}  // namespace

void apply_inference_layout(const EstimateRequest& r, Estimate& e) {
  const ParallelLayout& l = *r.parallel;
  if (l.sharding != ShardingStrategy::ddp || l.offload != Offload::none)
    throw Error(Field::gpus,
                "ZeRO, FSDP and offload shard training state; for inference split the model with " +
                    field_ref(Field::tp) + " / " + field_ref(Field::pp));
  if (!r.model.arch)
    throw Error(Field::tp,
                "splitting a model for inference needs its architecture (a preset or a config.json)");
  const InferenceSplit s = inference_split(r.model, l.tp, l.pp);
  Term& params = e.term(TermKind::parameters);
  set_bytes(params, weight_bytes_per_gpu(params.bytes, r.model.parameters, s));

  if (!r.seq || !r.model.mlp_widths.empty() || r.activation_bytes_per_row) return;
  TransformerArch arch = *r.model.arch;
  apply_layout_defaults(arch);
  TransformerArch gpu = arch;
  gpu.head_dim = arch.resolved_head_dim();
  gpu.layers = s.layers_per_gpu;
  gpu.heads = s.heads_per_gpu;
  gpu.kv_heads = s.kv_heads_per_gpu;
  gpu.intermediate = s.intermediate_per_gpu;
  gpu.vocab = s.vocab_per_gpu;
  InferenceOptions o;
  o.batch = r.batch;
  o.seq = r.seq;
  o.kv_cost = r.kv_format ? storage_format(*r.kv_format).cost : r.recipe.activations.cost;
  o.act_cost = r.recipe.activations.cost;
  o.attention = r.attention;
  o.fp32_logits = arch.causal;
  o.prefill_chunk = r.prefill_chunk;
  const KvCache c = inference_memory(gpu, o);
  set_bytes(e.term(TermKind::kv_cache), c.bytes);
  set_bytes(e.term(TermKind::activations), c.working_buffer_bytes);
  e.note({NoteCode::inference_split, {s.kv_heads_per_gpu, s.kv_replicas}, static_cast<double>(s.tp)});
}

std::optional<EstimateRequest> smallest_inference_layout(const EstimateRequest& r, uint64_t memory) {
  for (uint64_t tp = 1; tp <= 64; tp *= 2) {
    EstimateRequest t = r;
    t.parallel = ParallelLayout{};
    t.parallel->gpus = tp;
    t.parallel->tp = tp;
    try {
      EstimateRequest probe = t;
      probe.replay_below = memory;  // above it the verdict is "no" without the allocator replay
      if (estimate(probe).required_bytes() <= memory) return t;
    } catch (const Error& e) {
      if (e.field() != Field::tp) throw;  // tp does not divide the heads: the next size
    }
  }
  return std::nullopt;
}

}  // namespace memplan
