#include <memplan/estimate.hpp>

#include <algorithm>
#include <cmath>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"
#include "core/memory/activation_term.hpp"
#include "core/memory/bnb_conversion.hpp"
#include "core/memory/factored_state.hpp"
#include "core/memory/paged_state.hpp"
#include "core/memory/step_events.hpp"
#include "core/memory/step_replay.hpp"
#include "core/memory/step_timeline.hpp"
#include "core/parallel/inference_split.hpp"
#include "core/parallel/sharded_estimate.hpp"

namespace memplan {
namespace {

uint64_t trainable_count(uint64_t p, double share) {
  if (share >= 1.0) return p;
  const long double t = static_cast<long double>(p) * static_cast<long double>(share);
  return static_cast<uint64_t>(std::llround(t));
}

Line product(Counted what, FormatId format, uint64_t count, uint64_t bytes, uint64_t copies = 1) {
  Line l{};
  l.code = LineCode::product;
  l.what = what;
  l.format = format;
  l.n[0] = count;
  l.n[1] = copies;
  l.bytes = bytes;
  return l;
}

Line line(LineCode code, uint64_t bytes, uint64_t n0 = 0, uint64_t n1 = 0, uint64_t n2 = 0, uint64_t n3 = 0) {
  Line l{};
  l.code = code;
  l.n[0] = n0;
  l.n[1] = n1;
  l.n[2] = n2;
  l.n[3] = n3;
  l.bytes = bytes;
  return l;
}

// What a --quantize run leaves in the weight format, in elements. The quantisers behind the
// formats that are not llama.cpp's (bitsandbytes' Linear4bit/Linear8bitLt, AutoGPTQ/AutoAWQ's
// QuantLinear, fp8/int8/int4 weight-only schemes) replace nn.Linear layers only: the token
// embedding and a learned position table (nn.Embedding) stay as they are. transformers also skips
// the LM head (get_keys_to_not_convert: the output embeddings, and any weight tied to the input
// ones; integrations/bitsandbytes.py), Lit-GPT's Fabric quantises it as any other Linear.
// llama.cpp's types (q8_0, q4_0) quantise every tensor by their own rules, and a float format is
// the whole model cast: nothing kept there.
// Beyond them, what transformers' bitsandbytes conversion leaves by release (bnb_conversion.hpp).
struct UnquantisedTables {
  uint64_t embeddings = 0;
  uint64_t lm_head = 0;
  uint64_t unconverted = 0;  // what the bnb conversion leaves: the experts, or (`layers`) every layer
  bool layers = false;
};

UnquantisedTables unquantised_tables(const EstimateRequest& r, uint64_t frozen) {
  UnquantisedTables k;
  switch (*r.quantize) {
    case StorageFormatId::fp8_e4m3:
    case StorageFormatId::fp8_e5m2:
    case StorageFormatId::int8:
    case StorageFormatId::int4:
    case StorageFormatId::nf4:
    case StorageFormatId::nf4_dq:
    case StorageFormatId::gptq_4bit:
    case StorageFormatId::awq_4bit:
    case StorageFormatId::mxfp4:
      break;
    default:  // a float format (the whole model cast: advise's half-precision frozen weights) or llama.cpp's
      return k;
  }
  if (!r.model.arch) return k;
  const TransformerArch& a = *r.model.arch;
  uint64_t emb = checked_mul(a.vocab, a.hidden, "parameter count");
  if (a.position_embedding == "learned")
    emb = checked_add(emb, checked_mul(a.max_positions, a.hidden, "parameter count"), "parameter count");
  const uint64_t head = a.causal && !a.tied_embeddings && runs_transformers_code(r.framework)
                            ? checked_mul(a.vocab, a.hidden, "parameter count")
                            : 0;
  // Only what the frozen count holds (a model whose count is smaller is left as it is).
  const uint64_t tables = checked_add(emb, head, "parameter count");
  if (tables >= frozen) return k;
  k.layers = bnb_unconverted_layers(r);
  const uint64_t unconverted = k.layers ? frozen - tables : bnb_unconverted_experts(r);
  if (!k.layers && checked_add(tables, unconverted, "parameter count") >= frozen) return k;
  k.embeddings = emb;
  k.lm_head = head;
  k.unconverted = unconverted;
  return k;
}

void parameters_term(const EstimateRequest& r, uint64_t trainable, Term& t) {
  const uint64_t p = r.model.parameters;
  if (r.stored_weights && r.mode == Mode::infer && r.model.weight_bytes) {
    t.basis = Basis::stored;
    t.bytes = r.model.weight_bytes;
    t.add(line(LineCode::stored_weights, t.bytes));
    return;
  }
  if (r.quantize) {
    const StorageFormat& q = storage_format(*r.quantize);
    t.basis = Basis::quantized;
    uint64_t frozen = r.mode == Mode::infer ? p : p - trainable;
    const UnquantisedTables kept = unquantised_tables(r, frozen);
    frozen -= kept.embeddings + kept.lm_head + kept.unconverted;
    const uint64_t eb = bytes_for(kept.embeddings, r.recipe.weights.cost, "parameter bytes");
    const uint64_t hb = bytes_for(kept.lm_head, r.recipe.weights.cost, "parameter bytes");
    t.bytes = bytes_for(frozen, q.cost, "parameter bytes");
    t.add(product(Counted::frozen_weights, FormatId::quantized, frozen, t.bytes));
    if (kept.embeddings) {
      t.add(product(Counted::unquantised_embedding, FormatId::weights, kept.embeddings, eb));
      t.bytes = checked_add(t.bytes, eb, "parameter bytes");
    }
    if (kept.lm_head) {
      t.add(product(Counted::unquantised_lm_head, FormatId::weights, kept.lm_head, hb));
      t.bytes = checked_add(t.bytes, hb, "parameter bytes");
    }
    if (kept.unconverted) {
      const uint64_t xb = bytes_for(kept.unconverted, r.recipe.weights.cost, "parameter bytes");
      t.add(product(kept.layers ? Counted::unquantised_layers : Counted::unquantised_experts,
                    FormatId::weights, kept.unconverted, xb));
      t.bytes = checked_add(t.bytes, xb, "parameter bytes");
    }
    if (r.mode == Mode::train && trainable) {
      const bool fp32 = r.fp32_lora_adapters();
      const uint64_t tb =
          bytes_for(trainable, fp32 ? ElementCost{4, 1} : r.recipe.weights.cost, "parameter bytes");
      t.add(product(Counted::trainable_weights, fp32 ? FormatId::fp32 : FormatId::weights, trainable, tb));
      t.bytes = checked_add(t.bytes, tb, "parameter bytes");
    }
    return;
  }
  if (r.fp32_lora_adapters() && trainable) {
    const uint64_t fb = bytes_for(p - trainable, r.recipe.weights.cost, "parameter bytes");
    const uint64_t tb = bytes_for(trainable, ElementCost{4, 1}, "parameter bytes");
    t.add(product(Counted::frozen_weights, FormatId::weights, p - trainable, fb));
    t.add(product(Counted::trainable_weights, FormatId::fp32, trainable, tb));
    t.bytes = checked_add(fb, tb, "parameter bytes");
    return;
  }
  t.bytes = bytes_for(p, r.recipe.weights.cost, "parameter bytes");
  t.add(product(Counted::parameters, FormatId::weights, p, t.bytes));
}

// Master-weight recipes keep the gradients as the engine does: half (16 B per parameter in all),
// an fp32 buffer (18 B, Megatron's bf16 main_grad) or half plus an fp32 copy (20 B).
void gradients_term(const EstimateRequest& r, uint64_t trainable, Term& t) {
  const bool master = r.recipe.has_master();
  const bool fp32 = (master && r.grad_format == GradFormat::fp32) || r.fp32_lora_adapters();
  t.format = fp32 ? FormatId::fp32 : FormatId::gradients;
  if (r.mode == Mode::infer) {
    t.format = FormatId::gradients;
    t.basis = Basis::none_inference;
    return;
  }
  t.bytes = bytes_for(trainable, fp32 ? ElementCost{4, 1} : r.recipe.gradients.cost, "gradient bytes");
  t.add(product(Counted::gradients, t.format, trainable, t.bytes));
  if (master && r.grad_format == GradFormat::half_and_fp32) {
    const uint64_t copy = bytes_for(trainable, ElementCost{4, 1}, "gradient bytes");
    t.add(product(Counted::gradient_copy, FormatId::fp32, trainable, copy));
    t.bytes = checked_add(t.bytes, copy, "gradient bytes");
    t.plus_fp32 = true;
  }
}

// bitsandbytes' paged optimizers: the state of the tensors of 1e5 numbers or more moves out of the
// term into unified memory (paged_state.hpp), named by a line.
void page_state(const EstimateRequest& r, uint64_t trainable, Estimate& e, Term& t) {
  const PagedShare share = paged_share(r.model, e.lora, trainable);
  e.note({NoteCode::paged, {share.known ? 1u : 0u, 0}, 0.0});
  if (!share.known || share.elements == 0) return;
  const Optimizer& o = r.optimizer;
  const uint64_t n = checked_mul(share.elements, o.copies, "optimizer state bytes");
  const ElementCost cost = o.kind == StateKind::blockwise8bit ? k_blockwise8bit_cost : ElementCost{4, 1};
  const uint64_t b = std::min(bytes_for(n, cost, "optimizer state bytes"), t.bytes);
  Line l = line(LineCode::paged_state, b, share.elements, share.tensors);
  l.format = o.kind == StateKind::blockwise8bit ? FormatId::int8_blockwise : FormatId::fp32;
  t.add(l);
  t.bytes -= b;
}

// trainable_tensors: the trainable parameter tensors when known apart from the model's (LoRA's A
// and B per adapted matrix), else 0.
void optimizer_term(const EstimateRequest& r, uint64_t trainable, uint64_t trainable_tensors, Estimate& e) {
  const Optimizer& o = r.optimizer;
  Term& t = e.term(TermKind::optimizer_state);
  if (r.mode == Mode::infer) {
    t.basis = Basis::none_inference;
    return;
  }
  if (r.recipe.has_master()) {
    const uint64_t mb = bytes_for(trainable, r.recipe.master.cost, "optimizer state bytes");
    t.add(product(Counted::master_weights, FormatId::master, trainable, mb));
    t.bytes = mb;
  }
  switch (o.kind) {
    case StateKind::copies: {
      if (o.copies) {
        const uint64_t n = checked_mul(trainable, o.copies, "optimizer state bytes");
        const bool fp32 = r.fp32_lora_adapters() || o.fp32_state;
        const uint64_t b =
            bytes_for(n, fp32 ? ElementCost{4, 1} : r.recipe.optimizer_state.cost, "optimizer state bytes");
        t.add(product(Counted::optimizer_state, fp32 ? FormatId::fp32 : FormatId::optimizer_state, trainable,
                      b, o.copies));
        t.bytes = checked_add(t.bytes, b, "optimizer state bytes");
      }
      break;
    }
    case StateKind::blockwise8bit: {
      const uint64_t n = checked_mul(trainable, o.copies, "optimizer state bytes");
      const uint64_t b = bytes_for(n, k_blockwise8bit_cost, "optimizer state bytes");
      Line l = line(LineCode::blockwise_state, b, trainable, o.copies);
      l.format = FormatId::int8_blockwise;
      t.add(l);
      t.bytes = checked_add(t.bytes, b, "optimizer state bytes");
      e.note({NoteCode::blockwise8bit, {0, 0}, 0.0});
      break;
    }
    case StateKind::factored: {
      const FactoredState fs = factored_state_elements(r.model);
      const uint64_t elements =
          trainable == r.model.parameters
              ? fs.elements
              : trainable_count(fs.elements,
                                static_cast<double>(trainable) / static_cast<double>(r.model.parameters));
      // fp32 whatever the weights: transformers' Adafactor makes its state from the gradient after
      // upcasting a half one (`torch.zeros(shape).to(grad)`, optimizer_loop.hpp).
      const uint64_t b = bytes_for(elements, ElementCost{4, 1}, "optimizer state bytes");
      Line l = line(LineCode::factored_state, b, elements);
      l.format = FormatId::fp32;
      t.add(l);
      t.bytes = checked_add(t.bytes, b, "optimizer state bytes");
      e.note({NoteCode::factored, {static_cast<uint64_t>(fs.shapes), fs.count}, 0.0});
      break;
    }
  }
  if (o.paged) page_state(r, trainable, e, t);
  if (o.step_per_tensor) {
    if (trainable_tensors) {
      const uint64_t b = checked_mul(trainable_tensors, 4, "optimizer state bytes");
      t.add(line(LineCode::adapter_step_counters, b, trainable_tensors));
      t.bytes = checked_add(t.bytes, b, "optimizer state bytes");
    } else if (r.model.tensors && trainable == r.model.parameters) {
      const uint64_t b = checked_mul(r.model.tensors, 4, "optimizer state bytes");
      t.add(line(LineCode::step_counters, b, r.model.tensors));
      t.bytes = checked_add(t.bytes, b, "optimizer state bytes");
    } else if (!r.model.tensors) {
      e.note({NoteCode::steps_unknown_tensors, {0, 0}, 0.0});
    } else {
      e.note({NoteCode::steps_unknown_trainable, {0, 0}, 0.0});
    }
  }
}

// Replaces the single-GPU terms by the most-loaded GPU of the layout.
void apply_layout(const EstimateRequest& r, Estimate& e) {
  if (r.mode == Mode::infer) return apply_inference_layout(r, e);
  const ShardingRequest request = sharding_request_for(r, e);
  ShardingResult res = estimate_sharded(request);
  const uint64_t per_gpu[] = {res.gpu.parameters, res.gpu.gradients, res.gpu.optimizer_state,
                              res.gpu.activations};
  for (size_t k = 0; k < 4; ++k) {
    Term& t = e.terms[k];
    if (per_gpu[k] != t.bytes) {
      t.add(line(LineCode::most_loaded, per_gpu[k], t.bytes));
    }
    t.bytes = per_gpu[k];
  }
  Term& g = e.term(TermKind::gradients);
  // FSDP's mixed precision keeps the sharded flat parameter in fp32 (sharded_estimate.cpp).
  if (r.recipe.has_master() && request.bytes.weight == ElementCost{4, 1})
    e.term(TermKind::parameters).format = FormatId::fp32;
  if (r.recipe.has_master()) {  // as the engine keeps them (FSDP: the fp32 flat gradient)
    g.format = request.bytes.gradient == ElementCost{4, 1} ? FormatId::fp32 : FormatId::gradients;
    g.plus_fp32 = request.bytes.master_gradient.num != 0;
  }
  Term& buffers = e.term(TermKind::buffers);
  buffers.bytes = res.gpu.buffers;
  e.present[static_cast<size_t>(TermKind::buffers)] = true;
  e.sharded = std::move(res);
  if (!largest_layer_parameters(r) && sharding_level(e.sharded->layout.sharding) >= 3)
    e.note({NoteCode::largest_layer_unknown, {0, 0}, 0.0});
}

}  // namespace

const char* term_key(TermKind kind) {
  switch (kind) {
    case TermKind::parameters:
      return "parameters";
    case TermKind::gradients:
      return "gradients";
    case TermKind::optimizer_state:
      return "optimizer_state";
    case TermKind::activations:
      return "activations";
    case TermKind::kv_cache:
      return "kv_cache";
    case TermKind::buffers:
      return "buffers";
    case TermKind::overhead:
      return "overhead";
  }
  return "";
}

uint64_t Estimate::total_bytes() const {
  uint64_t sum = 0;
  for (size_t k = 0; k + 1 < k_term_kinds; ++k)
    if (present[k]) sum = checked_add(sum, terms[k].bytes, "total bytes");
  return sum;
}

uint64_t Estimate::peak_bytes() const { return timeline.present ? timeline.peak_bytes : total_bytes(); }

uint64_t Estimate::reserved_bytes() const {
  return timeline.reserved.present ? std::max(timeline.reserved.reserved_peak, peak_bytes()) : peak_bytes();
}

uint64_t Estimate::required_bytes() const {
  return checked_add(reserved_bytes(), bytes(TermKind::overhead), "required bytes");
}

Estimate estimate(const EstimateRequest& r) {
  if (r.model.parameters == 0) throw Error(Field::params, "the model has no parameters");
  if (!(r.trainable > 0.0 && r.trainable <= 1.0)) throw Error(Field::trainable, "must be in (0, 1]");
  if (r.batch == 0) throw Error(Field::batch, "\"0\" is not a batch size (expected at least 1)");
  Estimate e;
  e.mode = r.mode;
  for (size_t k = 0; k < k_term_kinds; ++k) {
    e.terms[k].kind = static_cast<TermKind>(k);
    e.present[k] = static_cast<TermKind>(k) != TermKind::buffers;
  }
  e.trainable_parameters = r.mode == Mode::infer ? 0 : trainable_count(r.model.parameters, r.trainable);
  uint64_t trainable_tensors = 0;
  if (r.lora) {  // exact: the adapters, not a rounded share
    e.lora = lora_adapters(r.model, *r.lora);
    if (e.lora->parameters >= r.model.parameters)
      throw Error(Field::lora, "the adapters (" + group_thousands(e.lora->parameters) +
                                   ") are not part of the model's parameters (" +
                                   group_thousands(r.model.parameters) + ")");
    if (r.mode == Mode::train) e.trainable_parameters = e.lora->parameters;
    trainable_tensors = checked_mul(2, e.lora->matrices, "tensors");
  }
  if (r.mode == Mode::train && e.trainable_parameters == 0)
    throw Error(Field::trainable, "leaves no trainable parameter of " + group_thousands(r.model.parameters));
  // Quantisation stores the frozen weights; with every parameter trained there are none, and the
  // flag would change nothing. Refused rather than noted: a QLoRA plan missing its adapters is a
  // mistake the number would hide.
  if (r.quantize && r.mode == Mode::train && e.trainable_parameters == r.model.parameters)
    throw Error(Field::quantize, "stores frozen weights, and a full fine-tune has none (expected " +
                                     field_ref(Field::lora) + " R or " + field_ref(Field::trainable) +
                                     " F for QLoRA, or " + field_ref(Field::mode) + " infer)");

  Term& params = e.term(TermKind::parameters);
  if (e.lora)
    params.add(line(LineCode::lora_adapters, 0, r.model.parameters - e.lora->parameters, e.lora->parameters,
                    r.model.parameters));
  parameters_term(r, e.trainable_parameters, params);
  gradients_term(r, e.trainable_parameters, e.term(TermKind::gradients));
  optimizer_term(r, e.trainable_parameters, trainable_tensors, e);
  add_activation_terms(r, e);
  for (Term& t : e.terms) t.single_gpu_bytes = t.bytes;

  if (r.parallel) apply_layout(r, e);
  e.timeline = step_timeline(r, e);
  if (r.replay_below != 0 &&
      checked_add(e.peak_bytes(), r.overhead_bytes, "required bytes") <= r.replay_below) {
    // Reserved bytes past replay_below - overhead already make the required bytes exceed it: the
    // replay may stop there (required_bytes() is then a lower bound above replay_below, as when
    // the replay is skipped).
    const uint64_t stop_above = r.replay_below == UINT64_MAX ? UINT64_MAX : r.replay_below - r.overhead_bytes;
    e.timeline.reserved = replay_request(r, e, r.expandable_segments, stop_above);
  }

  Term& overhead = e.term(TermKind::overhead);
  overhead.bytes = r.overhead_bytes;
  overhead.single_gpu_bytes = r.overhead_bytes;
  overhead.add(line(LineCode::overhead, r.overhead_bytes, !r.overhead_given));

  if (e.lora && r.mode == Mode::train)
    e.note({NoteCode::lora, {0, 0}, 0.0});
  else if (r.mode == Mode::train && r.trainable < 1.0)
    e.note({NoteCode::trainable_share, {e.trainable_parameters, 0}, r.trainable});
  if (r.recipe.loss_scaler && r.mode == Mode::train) e.note({NoteCode::loss_scaling, {0, 0}, 0.0});
  e.note({NoteCode::gib, {0, 0}, 0.0});
  return e;
}

}  // namespace memplan
