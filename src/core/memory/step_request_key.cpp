#include "core/memory/step_request_key.hpp"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace memplan {

namespace {

// The sizes the writers below were written for (64-bit libstdc++): a field added to one of these
// structs changes its size, and the build stops here until the writer knows the field.
#if defined(__GLIBCXX__) && UINTPTR_MAX == UINT64_MAX
static_assert(sizeof(EstimateRequest) == 1864, "a request field: add it to step_request_key");
static_assert(sizeof(ModelSpec) == 1088, "a model field: add it to step_request_key");
static_assert(sizeof(TransformerArch) == 496, "an arch field: add it to step_request_key");
static_assert(sizeof(VisionTower) == 224, "a vision field: add it to step_request_key");
static_assert(sizeof(LayerKind) == 128, "a layer-kind field: add it to step_request_key");
static_assert(sizeof(Recipe) == 344, "a recipe field: add it to step_request_key");
static_assert(sizeof(TermFormat) == 48, "a format field: add it to step_request_key");
static_assert(sizeof(Optimizer) == 80, "an optimizer field: add it to step_request_key");
static_assert(sizeof(ParallelLayout) == 88, "a layout field: add it to step_request_key");
static_assert(sizeof(LoraTargets) == 24, "a LoRA field: add it to step_request_key");
static_assert(sizeof(CudaRuntime) == 12, "a CUDA field: add it to step_request_key");
static_assert(sizeof(TorchRelease) == 8, "a torch field: add it to step_request_key");
static_assert(sizeof(TransformersRelease) == 8, "a transformers field: add it to step_request_key");
static_assert(sizeof(BitsandbytesRelease) == 12, "a bitsandbytes field: add it to step_request_key");
#endif

struct RequestKeyWriter {
  std::string& out;

  void raw(const void* p, size_t n) { out.append(static_cast<const char*>(p), n); }
  void u64(uint64_t v) { raw(&v, sizeof v); }
  void flag(bool v) { out.push_back(v ? '\1' : '\0'); }
  void real(double v) {  // the bit pattern: equal keys, equal values
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    u64(bits);
  }
  template <class E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
  void code(E v) {
    u64(static_cast<uint64_t>(v));
  }
  void text(const std::string& s) {  // length first: no two string lists write the same bytes
    u64(s.size());
    out.append(s);
  }
  void cost(const ElementCost& c) {
    u64(c.num);
    u64(c.den);
  }
  void format(const TermFormat& f) {
    text(f.name);
    cost(f.cost);
  }

  void arch(const TransformerArch& a) {
    text(a.model_type);
    flag(a.causal);
    for (uint64_t v :
         {a.layers, a.hidden, a.heads, a.kv_heads, a.head_dim, a.intermediate, a.vocab, a.max_positions})
      u64(v);
    flag(a.gated_mlp);
    text(a.activation);
    text(a.norm);
    for (bool v : {a.norm_first, a.parallel_attention, a.fused_qkv, a.ffn_dropout, a.final_norm, a.bias})
      flag(v);
    text(a.position_embedding);
    flag(a.tied_embeddings);
    real(a.hidden_dropout);
    real(a.attention_dropout);
    u64(a.experts);
    u64(a.experts_per_token);
    flag(a.encoder_decoder);
    text(a.encoder_head);
    u64(a.labels);
    for (uint64_t v :
         {a.decoder_layers, a.expert_intermediate, a.shared_experts, a.shared_intermediate, a.dense_layers,
          a.dense_intermediate, a.q_lora_rank, a.kv_lora_rank, a.qk_nope_head_dim, a.qk_rope_head_dim,
          a.v_head_dim, a.mtp_layers, a.window_layers, a.attention_window})
      u64(v);
    flag(a.chunked_attention);
    flag(a.attention_sinks);
    text(a.qk_norm);
    flag(a.python_gelu);
    u64(a.cross_attention_layers);
    u64(a.cross_attention_tokens);
    real(a.attn_softcap);
    real(a.final_softcap);
  }

  void vision(const VisionTower& v) {
    text(v.model_type);
    for (uint64_t n : {v.layers, v.used_layers, v.hidden, v.heads, v.intermediate, v.tokens}) u64(n);
    text(v.activation);
    text(v.projector);
    for (uint64_t n : {v.projector_tokens, v.text_hidden, v.merge}) u64(n);
    text(v.norm);
    flag(v.gated_mlp);
    u64(v.tiles);
    u64(v.projector_width);
  }

  void model(const ModelSpec& m) {
    text(m.id);
    text(m.name);
    text(m.source);
    u64(m.parameters);
    u64(m.active_parameters);
    u64(m.tensors);
    flag(m.arch.has_value());
    if (m.arch) arch(*m.arch);
    u64(m.mlp_widths.size());
    for (uint64_t w : m.mlp_widths) u64(w);
    flag(m.has_batchnorm);
    text(m.weight_format);
    u64(m.weight_bytes);
    u64(m.notes.size());
    for (const std::string& n : m.notes) text(n);
    u64(m.image_tokens);
    u64(m.mtp_parameters);
    u64(m.layer_kinds.size());
    for (const LayerKind& k : m.layer_kinds) {
      text(k.kind);
      for (uint64_t n : {k.layers, k.parameters, k.kv_elements_per_token, k.window}) u64(n);
      text(k.counted);
      text(k.fields);
    }
    text(m.assumption);
    for (uint64_t n : {m.image_token_pixels, m.image_tile_tokens, m.max_image_tiles, m.image_tile_pixels})
      u64(n);
    flag(m.vision.has_value());
    if (m.vision) vision(*m.vision);
    text(m.hf_repo);
  }

  void recipe(const Recipe& c) {
    text(c.name);
    for (const TermFormat* f : {&c.weights, &c.gradients, &c.master, &c.optimizer_state, &c.activations})
      format(*f);
    text(c.hardware_format);
    flag(c.loss_scaler);
    flag(c.autocast);
    text(c.description);
  }

  void optimizer(const Optimizer& o) {
    text(o.name);
    u64(o.copies);
    code(o.kind);
    for (bool v : {o.step_per_tensor, o.paged, o.fp32_state, o.transformers_loop}) flag(v);
    text(o.description);
  }

  void layout(const ParallelLayout& p) {
    u64(p.gpus);
    u64(p.nodes);
    code(p.sharding);
    code(p.offload);
    u64(p.tp);
    u64(p.pp);
    u64(p.dp);
    flag(p.sequence_parallel);
    u64(p.virtual_stages);
    u64(p.micro_batches);
    code(p.recompute);
    u64(p.prefetch_layers);
  }

  void lora(const LoraTargets& l) {
    u64(l.rank);
    for (bool v : {l.q, l.k, l.v, l.o, l.gate, l.up, l.down, l.fp32_adapters}) flag(v);
    real(l.dropout);
  }

  template <class T, class F>
  void maybe(const std::optional<T>& v, F write) {
    flag(v.has_value());
    if (v) write(*v);
  }

  void request(const EstimateRequest& r) {
    model(r.model);
    recipe(r.recipe);
    optimizer(r.optimizer);
    code(r.mode);
    real(r.trainable);
    maybe(r.quantize, [&](StorageFormatId f) { code(f); });
    u64(r.batch);
    u64(r.seq);
    u64(r.activation_bytes_per_row);
    code(r.attention);
    code(r.checkpointing);
    maybe(r.kv_format, [&](StorageFormatId f) { code(f); });
    // overhead_bytes: left out (read only after the replay, and to decide where it may stop)
    flag(r.overhead_given);
    u64(r.cuda.version.major);
    u64(r.cuda.version.minor);
    code(r.cuda.loading);
    u64(r.torch.major);
    u64(r.torch.minor);
    u64(r.transformers.major);
    u64(r.transformers.minor);
    u64(r.bitsandbytes.value());
    flag(r.stored_weights);
    maybe(r.parallel, [&](const ParallelLayout& p) { layout(p); });
    code(r.grad_format);
    u64(r.largest_layer);
    maybe(r.lora, [&](const LoraTargets& l) { lora(l); });
    maybe(r.llama_ftype, [&](uint32_t t) { u64(t); });
    u64(r.images);
    u64(r.image_size);
    code(r.device);
    code(r.loss);
    flag(r.keep_logits);
    flag(r.offloaded_checkpoints);
    u64(r.grad_accum);
    flag(r.grads_kept);
    code(r.optimizer_loop);
    u64(r.prefill_chunk);
    flag(r.all_logits);
    code(r.framework);
    flag(r.train_vision);
    flag(r.expandable_segments);
    // replay_below: left out (where a replay may stop, not what it replays)
  }
};

}  // namespace

const std::string& step_request_key(const EstimateRequest& r, bool expandable_segments, std::string& out) {
  out.clear();
  RequestKeyWriter w{out};
  w.request(r);
  w.flag(expandable_segments);
  return out;
}

}  // namespace memplan
