#include "core/memory/activation_term.hpp"

#include <algorithm>
#include <optional>

#include <memplan/framework_profile.hpp>
#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"
#include "core/memory/activations.hpp"
#include "core/memory/cross_attention_activations.hpp"
#include "core/memory/hf_release_rules.hpp"
#include "core/memory/kv_cache.hpp"
#include "core/memory/vision_activations.hpp"
#include "core/models/arch_layout.hpp"

namespace memplan {
namespace {

ActivationOptions options_for(const EstimateRequest& r, const TransformerArch* arch, bool record) {
  ActivationOptions o;
  o.batch = r.batch;
  o.seq = r.seq;
  o.attention = r.attention;
  o.checkpointing = r.checkpointing;
  o.act_cost = r.recipe.activations.cost;
  o.act_format = r.recipe.activations.name;
  o.autocast = r.recipe.autocast;
  // Hugging Face causal LMs upcast the logits to fp32 for the loss.
  o.fp32_logits = arch && arch->causal;
  if (arch && arch->causal && runs_transformers_code(r.framework) && r.device == Device::cuda) {
    const detail::HfLossRule rule = detail::hf_loss_rule(arch->model_type, r.transformers);
    o.fp32_logits = rule.upcast;
    o.logits_half_dropped = rule.half_dropped;
    o.loss_shifted_copy = rule.shifted_copy;
  }
  o.transformers = r.transformers;
  o.dropout = arch && (arch->hidden_dropout > 0 || arch->attention_dropout > 0);
  if (arch && r.lora) o.lora = r.lora;
  o.runtime = r.device == Device::cpu ? Runtime::cpu_torch113 : Runtime::cuda;
  o.softmax_keeps_input = r.device == Device::cuda && r.torch.softmax_keeps_input();
  o.loss = r.loss;
  o.keep_logits = r.keep_logits;
  // bitsandbytes' MatMul4Bit keeps its input before 0.43.2 (bitsandbytes_release.hpp); torchtune's
  // NF4 weights are torchao's, whose LinearNF4 saves only the weight (torchao dtypes/nf4tensor.py).
  o.bnb_layers = is_nf4(r.quantize) && r.framework != Framework::torchtune;
  o.bnb_4bit = o.bnb_layers && r.bitsandbytes.matmul_4bit_keeps_input();
  o.autocast_over_half = framework_profile(r.framework).autocast_over_half.value.value_or(false) &&
                         !r.recipe.autocast && !(r.recipe.activations.cost == ElementCost{4, 1});
  o.litgpt = r.framework == Framework::litgpt;
  o.torchtune = r.framework == Framework::torchtune;
  o.offloaded_checkpoints = r.offloaded_checkpoints;
  o.record = record;
  return o;
}

// BatchNorm after each hidden Linear keeps its input (the Linear's output) for backward; its
// per-feature mean and inverse std are batch independent and negligible.
void add_batchnorm(const std::vector<uint64_t>& widths, const EstimateRequest& r, bool record,
                   ActivationLedger& l) {
  for (size_t i = 1; i + 1 < widths.size(); ++i) {
    const uint64_t per_sample = bytes_for(widths[i], r.recipe.activations.cost, "activation bytes");
    if (record)
      l.outside_layers.push_back(
          {"BatchNorm " + std::to_string(i) + " input (Linear " + std::to_string(i) + " output)",
           std::to_string(r.batch) + " x " + std::to_string(widths[i]), r.recipe.activations.name,
           checked_mul(per_sample, r.batch, "activation bytes"), Role::saved});
    l.bytes_per_sample = checked_add(l.bytes_per_sample, per_sample, "activation bytes");
  }
  l.saved_bytes_per_sample = l.bytes_per_sample;
  l.total_bytes = checked_mul(r.batch, l.bytes_per_sample, "activation bytes");
  if (record)
    l.notes.push_back("BatchNorm after every hidden Linear (" + field_ref(Field::batchnorm) +
                      "): keeps its input for backward");
}

// The training ledger of the request's MLP or transformer.
ActivationLedger training_ledger(const EstimateRequest& r, bool record) {
  const ModelSpec& m = r.model;
  if (!m.mlp_widths.empty()) {
    ActivationLedger l = mlp_activations(m.mlp_widths, options_for(r, nullptr, record));
    if (m.has_batchnorm) add_batchnorm(m.mlp_widths, r, record, l);
    return l;
  }
  TransformerArch arch = *m.arch;
  apply_layout_defaults(arch);
  // mllama's cross-attention layers run only with images; they are counted beside them (vision_part).
  arch.layers -= std::min(arch.layers, arch.cross_attention_layers);
  ActivationLedger l = transformer_activations(arch, options_for(r, &arch, record));
  if (record && arch.cross_attention_layers)
    l.notes.push_back("mllama: " + std::to_string(arch.layers) + " self-attention layers here; the " +
                      std::to_string(arch.cross_attention_layers) +
                      " cross-attention layers (cross_attention_layers) run only for a sample with images");
  return l;
}

// Training with images: the vision tower and projector (vision_activations.hpp). A vision-language
// model whose tower the ledger does not model is refused rather than counted without it.
std::optional<VisionActivations> vision_part(const EstimateRequest& r, bool record) {
  if (!r.images || r.mode != Mode::train) return std::nullopt;
  if (!r.model.vision)
    throw Error(
        Field::images,
        "training with images needs the vision tower's activations, which memplan counts for "
        "clip_vision_model (LLaVA), siglip_vision_model (Gemma 3), and Qwen2-VL / Qwen2.5-VL, Llama 4 "
        "and mllama (frozen) towers "
        "read from a config.json; " +
            (r.model.arch ? r.model.arch->model_type : std::string("this model")) +
            "'s tower is not in the ledger");
  TransformerArch arch = *r.model.arch;
  apply_layout_defaults(arch);
  const ActivationOptions o = options_for(r, &arch, record);
  VisionActivations v = vision_activations(*r.model.vision, r.images, r.train_vision, !r.lora, o);
  if (arch.cross_attention_layers) {
    // mllama: the cross-attention layers, compared under checkpointing with a self-attention layer.
    TransformerArch self = arch;
    self.layers = 1;
    ActivationOptions one = o;
    one.batch = 1;
    one.checkpointing = Checkpointing::none;
    one.record = false;
    const uint64_t self_layer = transformer_activations(self, one).layer_bytes;
    one = o;
    one.batch = 1;
    const uint64_t features =
        checked_mul(r.images, checked_mul(r.model.vision->tiles, r.model.vision->tokens, "image features"),
                    "image features");
    const CrossAttentionActivations c = cross_attention_activations(arch, features, one, self_layer);
    v.bytes_per_sample = checked_add(v.bytes_per_sample, c.bytes_per_sample, "activation bytes");
    v.cross_layers = c.layers;
    v.cross_layer_bytes = c.layer_bytes;
    v.cross_shared_bytes = c.shared_bytes;
    v.cross_rebuild_bytes = c.rebuild_bytes;
    v.cross_bytes_per_sample = c.bytes_per_sample;
    v.sample_rows = c.rows;
    v.notes.insert(v.notes.end(), c.notes.begin(), c.notes.end());
  }
  return v;
}

bool is_transformer(const ModelSpec& m) {
  return m.arch && m.arch->layers && m.arch->hidden && m.arch->heads;
}

bool has_ledger(const EstimateRequest& r) {
  return r.mode == Mode::train && !r.activation_bytes_per_row &&
         (!r.model.mlp_widths.empty() || (is_transformer(r.model) && r.seq));
}

void training_activations(const EstimateRequest& r, Estimate& e) {
  const ActivationLedger l = training_ledger(r, false);
  Term& a = e.term(TermKind::activations);
  a.basis = Basis::ledger;
  a.batch = r.batch;
  a.per_sample = l.bytes_per_sample;
  a.fixed_bytes = l.fixed_bytes;
  a.bytes = checked_add(l.total_bytes, l.fixed_bytes, "activation bytes");
  const uint64_t batch = std::max<uint64_t>(r.batch, 1);
  if (l.layers) {
    Line per_sample{};
    per_sample.code = LineCode::layers_per_sample;
    per_sample.n[0] = l.layers;
    per_sample.n[1] = l.first_layer_bytes / batch;
    per_sample.n[2] = l.layer_bytes / batch;
    per_sample.n[3] = l.bytes_per_sample;
    a.add(per_sample);
  }
  Line total{};
  total.code = LineCode::batch_per_sample;
  total.n[0] = r.batch;
  total.n[1] = l.bytes_per_sample;
  total.bytes = l.total_bytes;
  a.add(total);
  if (const auto v = vision_part(r, false)) {
    Line vl{};
    vl.code = v->patches_per_sample ? LineCode::vision_patches : LineCode::vision_tower;
    vl.n[0] = v->images;
    vl.n[1] = v->patches_per_sample ? v->patches_per_sample : v->tower_bytes_per_image;
    vl.n[2] = v->projector_bytes_per_image;
    vl.n[3] = v->patches_per_sample ? v->transient_bytes_per_sample : v->transient_bytes_per_image;
    vl.bytes = checked_mul(r.batch, v->bytes_per_sample - v->cross_bytes_per_sample, "activation bytes");
    a.add(vl);
    if (v->cross_layers) {
      Line cl{};
      cl.code = LineCode::cross_attention_layers;
      cl.n[0] = v->cross_layers;
      cl.n[1] = v->cross_layer_bytes;
      cl.n[2] = v->cross_shared_bytes;
      cl.n[3] = v->cross_rebuild_bytes;
      cl.bytes = checked_mul(r.batch, v->cross_bytes_per_sample, "activation bytes");
      a.add(cl);
    }
    a.per_sample = checked_add(a.per_sample, v->bytes_per_sample, "activation bytes");
    a.fixed_bytes = checked_add(a.fixed_bytes, v->fixed_bytes, "activation bytes");
    a.bytes =
        checked_add(a.bytes, checked_add(vl.bytes, v->fixed_bytes, "activation bytes"), "activation bytes");
    a.bytes = checked_add(a.bytes, checked_mul(r.batch, v->cross_bytes_per_sample, "activation bytes"),
                          "activation bytes");
  }
  if (l.fixed_bytes) {
    Line fixed{};
    fixed.code = LineCode::autocast_weights;
    fixed.bytes = l.fixed_bytes;
    fixed.n[0] = l.layer_weight_copy_bytes;  // full checkpointing: the rebuilt layer's share
    a.add(fixed);
  }
  e.ledger.present = true;
  e.ledger.mlp = !r.model.mlp_widths.empty();
  e.ledger.layers = l.layers;
  e.ledger.first_layer_bytes = l.first_layer_bytes;
  e.ledger.layer_bytes = l.layer_bytes;
  e.ledger.bytes_per_sample = l.bytes_per_sample;
  e.ledger.held_bytes = checked_mul(r.batch, l.held_bytes_per_sample, "activation bytes");
  e.ledger.loss_input_bytes = checked_mul(r.batch, l.loss_input_bytes_per_sample, "activation bytes");
  e.ledger.log_softmax_input_bytes =
      checked_mul(r.batch, l.log_softmax_input_bytes_per_sample, "activation bytes");
  e.ledger.kept_bytes = checked_mul(r.batch, l.kept_bytes_per_sample, "activation bytes");
  e.note({NoteCode::ledger, {0, 0}, 0.0});
  if (l.recompute_fraction > 0) e.note({NoteCode::checkpointing_compute, {0, 0}, l.recompute_fraction});
}

void inference_activations(const EstimateRequest& r, Estimate& e) {
  const ModelSpec& m = r.model;
  Term& a = e.term(TermKind::activations);
  if (!m.mlp_widths.empty()) {
    const uint64_t widest = *std::max_element(m.mlp_widths.begin(), m.mlp_widths.end());
    const uint64_t per_row = bytes_for(2 * widest, r.recipe.activations.cost);
    a.basis = Basis::mlp_buffer;
    a.batch = r.batch;
    a.bytes = checked_mul(r.batch, per_row, "activation bytes");
    Line l{};
    l.code = LineCode::mlp_working_buffer;
    l.format = FormatId::activations;
    l.n[0] = r.batch;
    l.n[1] = widest;
    l.bytes = a.bytes;
    a.add(l);
    return;
  }
  TransformerArch arch = *m.arch;
  apply_layout_defaults(arch);
  const bool litgpt = r.framework == Framework::litgpt;
  // Lit-GPT's KVCache (lit_gpt/model.py build_kv_cache at 8641822) holds every query head unless
  // there is a single kv head: grouped k and v are expanded before they are cached.
  if (litgpt && arch.resolved_kv_heads() != 1) arch.kv_heads = arch.heads;
  InferenceOptions o;
  o.batch = r.batch;
  o.seq = r.seq;
  o.kv_cost = r.kv_format ? storage_format(*r.kv_format).cost : r.recipe.activations.cost;
  o.act_cost = r.recipe.activations.cost;
  o.attention = r.attention;
  o.fp32_logits = arch.causal;
  o.prefill_chunk = r.prefill_chunk;
  o.all_logits = r.all_logits;
  const KvCache c = inference_memory(arch, o);
  Term& kv = e.term(TermKind::kv_cache);
  kv.bytes = c.bytes;
  kv.batch = r.batch;
  kv.per_sample = r.seq;
  Line kl{};
  kl.code = LineCode::kv_cache;
  kl.format = FormatId::kv;
  kl.n[0] = arch.layers;
  kl.n[1] = arch.resolved_kv_heads();
  kl.n[2] = arch.resolved_head_dim();
  kl.n[3] = r.seq;
  if (arch.mla()) {  // per layer kind (kv_cache.hpp): the latent, or full and windowed layers
    kl.code = LineCode::kv_cache_latent;
    kl.n[0] = c.elements_per_token;
    kl.n[1] = arch.heads * (arch.qk_nope_head_dim + arch.qk_rope_head_dim + arch.v_head_dim);
    kl.n[2] = arch.layers;
  } else if (c.cross_layers) {  // self-attention layers over the text, cross-attention over the images
    kl.code = LineCode::kv_cache_cross;
    kl.n[0] = c.elements_per_token;
    kl.n[1] = c.full_layers;
    kl.n[2] = c.cross_layers;
    kl.n[3] = c.cross_tokens;
  } else if (c.window_layers) {
    kl.code = LineCode::kv_cache_layers;
    kl.n[0] = c.elements_per_token;
    kl.n[1] = c.full_layers;
    kl.n[2] = c.window_layers;
    kl.n[3] = c.window_tokens;
  }
  kl.bytes = c.bytes;
  kv.add(kl);
  a.basis = Basis::kv_buffer;
  a.bytes = c.working_buffer_bytes;
  Line wl{};
  wl.code = LineCode::kv_working_buffer;
  wl.n[0] = static_cast<uint64_t>(c.working_buffer);
  wl.n[1] = c.prefill_tokens < r.batch * r.seq ? c.prefill_tokens : 0;  // a chunk, not the whole batch
  wl.bytes = c.working_buffer_bytes;
  a.add(wl);
  // Lit-GPT on Fabric's bitsandbytes layers: a matmul of more than one token (the prompt) dequantises
  // the 4-bit weight to fp16 (Fabric quantised it from an fp16 copy) and casts it to bf16.
  if (litgpt && is_nf4(r.quantize)) {
    const uint64_t hd = arch.resolved_head_dim();
    const uint64_t qkv =
        checked_mul(arch.hidden, checked_mul(arch.heads + 2 * m.arch->resolved_kv_heads(), hd, "w"), "w");
    const uint64_t ff = arch.intermediate ? arch.intermediate : checked_mul(4, arch.hidden, "w");
    const uint64_t largest =
        std::max({checked_mul(arch.vocab, arch.hidden, "w"), qkv, checked_mul(arch.hidden, ff, "w")});
    Line dl{};
    dl.code = LineCode::bnb_dequant_weight;
    dl.n[0] = largest;
    dl.bytes = checked_mul(4, largest, "activation bytes");
    a.add(dl);
    a.bytes = checked_add(a.bytes, dl.bytes, "activation bytes");
  }
}

}  // namespace

void add_activation_terms(const EstimateRequest& r, Estimate& e) {
  Term& a = e.term(TermKind::activations);
  a.format = FormatId::activations;
  if (r.activation_bytes_per_row) {
    a.basis = Basis::measured;
    a.batch = r.batch;
    a.per_sample = r.activation_bytes_per_row;
    a.bytes = checked_mul(r.batch, r.activation_bytes_per_row, "activation bytes");
    Line l{};
    l.code = LineCode::measured_rows;
    l.n[0] = r.batch;
    l.n[1] = r.activation_bytes_per_row;
    l.bytes = a.bytes;
    a.add(l);
    return;
  }
  const bool transformer = is_transformer(r.model);
  if (transformer && r.seq && r.model.arch->max_positions && r.seq > r.model.arch->max_positions)
    e.note({NoteCode::seq_beyond_context, {r.seq, r.model.arch->max_positions}, 0.0});
  if (!r.model.mlp_widths.empty() || (transformer && r.seq)) {
    if (r.mode == Mode::train)
      training_activations(r, e);
    else
      inference_activations(r, e);
    return;
  }
  a.basis = Basis::not_counted;
  if (transformer)
    e.note({NoteCode::activations_need_seq, {r.model.arch->max_positions, 0}, 0.0});
  else
    e.note({NoteCode::activations_unknown, {0, 0}, 0.0});
}

RecomputedLayer recomputed_layer(const EstimateRequest& r) {
  RecomputedLayer out;
  if (!has_ledger(r) || r.checkpointing != Checkpointing::full || !r.model.mlp_widths.empty()) return out;
  const ActivationLedger l = training_ledger(r, false);
  out.saved_bytes = l.recompute_bytes;
  out.weight_copy_bytes = l.layer_weight_copy_bytes;
  out.cached_copy_bytes = l.layer_cached_copy_bytes;
  out.autocast_cache_bytes = checked_mul(l.layers, l.layer_cached_copy_bytes, "autocast weight cache");
  return out;
}

LedgerDetail activation_ledger_detail(const EstimateRequest& r) {
  LedgerDetail d;
  if (!has_ledger(r)) return d;
  const ActivationLedger l = training_ledger(r, true);
  for (const SavedTensor& t : l.per_layer)
    d.rows.push_back(
        {t.name + (t.role == Role::recomputed ? " (recomputed)" : ""), t.shape, t.format, t.bytes});
  for (const SavedTensor& t : l.outside_layers)
    d.rows.push_back({"[outside layers] " + t.name + (t.role == Role::recomputed ? " (recomputed)" : ""),
                      t.shape, t.format, t.bytes});
  d.notes = l.notes;
  if (const auto v = vision_part(r, true)) {
    for (const SavedTensor& t : v->rows)
      d.rows.push_back({t.name, std::to_string(checked_mul(r.batch, r.images, "images")) + " x " + t.shape,
                        t.format, checked_mul(r.batch, t.bytes, "activation bytes")});
    for (const SavedTensor& t : v->sample_rows)
      d.rows.push_back({t.name, std::to_string(r.batch) + " x " + t.shape, t.format,
                        checked_mul(r.batch, t.bytes, "activation bytes")});
    d.notes.insert(d.notes.end(), v->notes.begin(), v->notes.end());
  }
  return d;
}

std::optional<ActivationLedger> training_activation_ledger(const EstimateRequest& r) {
  if (!has_ledger(r)) return std::nullopt;
  return training_ledger(r, true);
}

}  // namespace memplan
