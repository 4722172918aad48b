// The training step tensor by tensor (step_events.hpp), in the order PyTorch allocates and frees:
//   loading     every parameter tensor in load order (embeddings, the layers, the head), with the
//               loader's temporaries (weight_load.hpp: a QLoRA load's 16-bit copies); a layout's
//               buffers (DDP's gradient buckets, bucket by bucket in the order the Reducer makes
//               them: ddp_buckets.hpp; ZeRO-3/FSDP's gathered layers as one tensor); then the two
//               cuBLAS workspaces (timeline.hpp), kept from then on
//   forward     per micro-batch: the embedding's saved tensors, each layer's saved tensors (the
//               ledger's rows; autocast's half weight copies with their layer; eager attention's
//               score tensors made and freed before its probabilities; a checkpointed layer's
//               intermediates made and freed around the next layer's kept input, its autocast
//               weight copies cached), what follows the layers (final norm, LM head input,
//               log-softmax)
//   loss        the held tensors (logits, their fp32 upcast); then autocast's cache freed
//   backward    the held tensors freed; cross-entropy's two gradients made and freed; the
//               log-softmax freed; then layer by layer in reverse: the layer rebuilt (full
//               checkpointing), the last layer's MLP gradients made and freed, the layer's saved
//               tensors freed, its parameter gradients allocated (first micro-batch only: later
//               ones accumulate into them); the embedding's and the head's gradients last
//   optimizer   per trainable tensor: its state allocated at step 1 (torch initialises state
//               lazily inside step(): zeros_like per parameter); torch >= 2's foreach AdamW makes one
//               temporary per tensor for all at once, the per-tensor loop two for one tensor at a time
//   zero_grad   set_to_none frees every gradient (unless kept: --zero-grad zeros, torch < 2)
// The byte counts are the estimate's: the parameter, gradient and state terms over the parameter
// tensors, each its elements x the term's bytes per element (the shapes come from the
// architecture; what they do not name is one more tensor; sub-byte formats in proportion),
// the activations are the ledger's rows, the transients the timeline's. The state allocated at
// step 1 lands in the holes the freed activations left; step 2's activations then need new
// segments: that is the fragmentation reserved memory shows.

#include "core/memory/step_events.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "core/base/checked.hpp"
#include "core/memory/activation_term.hpp"
#include "core/memory/ddp_buckets.hpp"
#include "core/memory/optimizer_loop.hpp"
#include "core/memory/optimizer_step_events.hpp"
#include "core/memory/parameter_tensors.hpp"
#include "core/memory/step_event_builder.hpp"
#include "core/memory/step_timeline.hpp"
#include "core/memory/tensor_sizes.hpp"
#include "core/memory/weight_load.hpp"

namespace memplan {
namespace {

using replay::Builder;
using replay::Tensor;

// LoRA: the adapters' A and B of every adapted matrix, spread evenly over the layers.
std::vector<Tensor> over_adapters(uint64_t total, const LoraAdapters& lora, uint64_t layers) {
  const uint64_t count = std::max<uint64_t>(2 * lora.matrices, 1);
  const std::vector<uint64_t> bytes = divide(total, std::vector<uint64_t>(count, 1));
  std::vector<Tensor> out(count);
  for (uint64_t i = 0; i < count; ++i)
    out[i] = {layers ? static_cast<int64_t>(i * layers / count) : -1, bytes[i], 0};
  return out;
}

// The activation ledger's rows by where they are made and freed.
struct Activations {
  std::vector<Tensor> before;  // the embedding's saved tensors
  std::vector<std::vector<Tensor>> layers;
  std::vector<std::vector<Tensor>> rebuilt;  // full checkpointing: made in backward
  std::vector<Tensor> after;                 // final norm, LM head input, log-softmax
  std::vector<Tensor> held;                  // logits (and their upcast) for the loss
  int64_t log_softmax = -1;                  // index in `after` of what cross-entropy keeps
  int64_t log_softmax_input = -1;            // torch < 1.11: its input, freed with it
  int64_t kept = -1;                         // index in `after` of the logits the loop keeps
  bool attention_dropout = false;            // eager attention with dropout on its probabilities
  // Autocast caches the half weight copies the checkpointed forward makes (the last tensor of each
  // `rebuilt`) until the loss is computed (activation_term.hpp's RecomputedLayer).
  uint64_t cached_copies = 0;  // bytes a layer leaves in the cache (its copy's, or the adapters')
  // Rows of `after` freed elsewhere: with the loss's backward, or by the training loop.
  bool loss_owned(size_t k) const {
    const auto i = static_cast<int64_t>(k);
    return i == log_softmax || i == log_softmax_input || i == kept;
  }
};

// Eager attention's score tensors, batch x heads x s x s in the format the matmul makes: the size
// of the probabilities, or of their cast back where softmax runs in fp32.
uint64_t eager_scores_bytes(const ActivationLedger& l) {
  uint64_t bytes = 0;
  for (const SavedTensor& t : l.per_layer) {
    if (t.name == "softmax probabilities") bytes = t.bytes;
    if (t.name.rfind("probabilities cast to", 0) == 0) return t.bytes;
  }
  return bytes;
}

Activations activations(const EstimateRequest& r, const Estimate& e) {
  Activations a;
  const std::optional<ActivationLedger> l = training_activation_ledger(r);
  if (!l) return a;
  const uint64_t layers = l->layers;
  bool keeps_input = false;
  for (const SavedTensor& t : l->per_layer) {
    if (t.name == "attention dropout mask") a.attention_dropout = true;
    if (t.name.rfind("softmax input", 0) == 0) keeps_input = true;
  }
  a.layers.resize(layers);
  a.rebuilt.resize(layers);
  uint64_t counted = 0;
  for (const SavedTensor& t : l->outside_layers) {
    // Outside rows named for the embedding come before layer 0; the others follow the last layer.
    const bool before = t.name.rfind("embedding", 0) == 0;
    Tensor x{before ? -1 : -2, t.bytes, 0};
    counted += t.bytes;
    if (t.role == Role::held) {
      a.held.push_back(x);
    } else if (before) {
      a.before.push_back(x);
    } else {
      if (r.loss == Loss::plain && t.bytes == e.ledger.loss_input_bytes && a.log_softmax < 0 &&
          t.name.rfind("log-softmax", 0) == 0)
        a.log_softmax = static_cast<int64_t>(a.after.size());
      if (e.ledger.log_softmax_input_bytes && t.name.find("torch < 1.11's log-softmax") != std::string::npos)
        a.log_softmax_input = static_cast<int64_t>(a.after.size());
      if (e.ledger.kept_bytes && t.bytes == e.ledger.kept_bytes && a.kept < 0 &&
          t.name.rfind("logits", 0) == 0)
        a.kept = static_cast<int64_t>(a.after.size());
      a.after.push_back(x);
    }
  }
  // Layer 0 differs from the others by first_layer_bytes - layer_bytes (it reads the embedding).
  const uint64_t typical = l->layer_bytes;
  const uint64_t first = l->first_layer_bytes;
  const uint64_t copies = r.recipe.autocast ? l->fixed_bytes : 0;
  const RecomputedLayer rl = recomputed_layer(r);
  const uint64_t forward_copies = copies - std::min(copies, rl.weight_copy_bytes);
  const uint64_t per_layer_copies = layers ? forward_copies / layers : 0;
  // A layer's tensors, the same in every layer but for their group: worked out once.
  std::vector<Tensor> rows;
  rows.reserve(l->per_layer.size());
  size_t rebuilt_rows = 0;
  for (const SavedTensor& t : l->per_layer) {
    Tensor x{0, t.bytes, 0};
    if (t.name == "softmax probabilities" || t.name.rfind("softmax input", 0) == 0) {
      x.scores = eager_scores_bytes(*l);
      x.grad_chain = t.name == "softmax probabilities";
      // torch < 1.11 keeps softmax's input: the masked scores themselves, or the fp32 copy of them
      // autocast makes; the probabilities then follow it.
      x.made_before = x.grad_chain ? (keeps_input ? 0 : 3) : (t.bytes == x.scores ? 2 : 3);
    }
    rows.push_back(x);
    if (t.role == Role::recomputed) ++rebuilt_rows;
  }
  for (uint64_t i = 0; i < layers; ++i) {
    a.layers[i].reserve(rows.size() - rebuilt_rows + 2);
    a.rebuilt[i].reserve(rebuilt_rows + 1);
    for (size_t k = 0; k < rows.size(); ++k) {
      const SavedTensor& t = l->per_layer[k];
      Tensor x = rows[k];
      x.group = static_cast<int64_t>(i);
      (t.role == Role::recomputed ? a.rebuilt[i] : a.layers[i]).push_back(x);
      if (t.role != Role::recomputed || i == 0) counted += t.bytes;
    }
    const uint64_t c = i + 1 == layers ? forward_copies - per_layer_copies * (layers - 1) : per_layer_copies;
    if (c) a.layers[i].push_back({static_cast<int64_t>(i), c, 0});
    counted += c;
    if (rl.weight_copy_bytes) a.rebuilt[i].push_back({static_cast<int64_t>(i), rl.weight_copy_bytes, 0});
  }
  a.cached_copies = rl.autocast_cache_bytes ? rl.cached_copy_bytes : 0;
  counted += layers ? rl.weight_copy_bytes : 0;
  if (layers && first > typical) {
    a.layers[0].push_back({0, first - typical, 0});
    counted += first - typical;
  } else if (layers && first < typical) {
    // Layer 0 keeps less: its largest saved tensor shrinks by the difference.
    auto it = std::max_element(a.layers[0].begin(), a.layers[0].end(),
                               [](const Tensor& x, const Tensor& y) { return x.bytes < y.bytes; });
    const uint64_t cut = std::min(it->bytes, typical - first);
    it->bytes -= cut;
    counted -= cut;
  }
  // Whatever the rows do not name (autocast copies without layers, the LM head's copy) is made
  // with the embedding's tensors, so the sum is the activation term exactly.
  const uint64_t total = e.term(TermKind::activations).bytes;
  if (total > counted) a.before.push_back({-1, total - counted, 0});
  return a;
}

// A layout's buffers term over its tensors: DDP's buckets made from the gradients' bytes (allocated
// last bucket first: DDP gives the Reducer the assignment reversed), else one tensor.
std::vector<Tensor> buffers(const Estimate& e, const std::vector<Tensor>& grads) {
  const uint64_t total = e.has(TermKind::buffers) ? e.bytes(TermKind::buffers) : 0;
  if (!total) return {};
  std::vector<uint64_t> parts{total};
  if (e.sharded && e.sharded->arithmetic.bucket_bytes) {
    std::vector<uint64_t> grad_bytes;
    for (const Tensor& g : grads) grad_bytes.push_back(g.bytes);
    std::vector<uint64_t> buckets = ddp_bucket_bytes(grad_bytes);
    std::reverse(buckets.begin(), buckets.end());
    if (!buckets.empty()) parts = divide(total, buckets);
  }
  std::vector<Tensor> out;
  for (const uint64_t b : parts) out.push_back({-1, b, 0});
  return out;
}

void free_all(Builder& b, const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts) b.free(t);
}

// A chain of `n` tensors of `bytes`, each freed once the next exists (at most two alive).
void chain(Builder& b, uint64_t bytes, int n) {
  uint64_t prev = 0;
  for (int k = 0; k < n; ++k) {
    const uint64_t next = b.alloc(bytes);
    if (k) b.free(prev, bytes);
    prev = next;
  }
  if (n) b.free(prev, bytes);
}

// A layer's saved tensors made in the forward (or rebuilt in backward). Eager attention makes its
// scores before the probabilities: the q.k^T product, its scaled copy and its masked copy (Hugging
// Face's BERT and GPT-2: matmul, division by sqrt(head_dim), + the mask), each freed by the next;
// the last is freed once softmax has made the probabilities (torch < 1.11: it is softmax's kept
// input, or is freed once autocast has made the fp32 copy softmax keeps).
void alloc_layer(Builder& b, std::vector<Tensor>& ts) {
  for (Tensor& t : ts) {
    uint64_t prev = 0;
    for (uint8_t k = 0; k < t.made_before; ++k) {
      const uint64_t next = b.alloc(t.scores);
      if (k) b.free(prev, t.scores);
      prev = next;
    }
    b.alloc(t);
    if (t.made_before) b.free(prev, t.scores);
  }
}

// A layer's backward frees its saved tensors, latest first. Eager attention's scores get their
// gradients once what was saved after the probabilities is freed: the gradient of the
// probabilities (of the dropout output, then of its input when dropout runs), softmax's backward,
// the scale's, each the scores' size and each freed by the next.
void free_layer(Builder& b, const std::vector<Tensor>& ts, bool dropout) {
  for (size_t k = ts.size(); k-- > 0;) {
    if (ts[k].grad_chain) chain(b, ts[k].scores, dropout ? 4 : 3);
    b.free(ts[k]);
  }
}

}  // namespace

// step_events() into `out` (cleared first; its memory is reused).
void build_step_events(const EstimateRequest& r, const Estimate& e, uint8_t steps,
                       std::vector<StepEvent>& out) {
  out.clear();
  if (!e.timeline.present) return;
  Builder b;
  b.events.swap(out);
  struct GiveBack {  // the events go back to `out` however this returns
    Builder& b;
    std::vector<StepEvent>& out;
    ~GiveBack() { out.swap(b.events); }
  } give_back{b, out};
  const ParameterShapes shapes = parameter_shapes(r.model);
  std::vector<Tensor> weights = over_parameters(e.bytes(TermKind::parameters), shapes, r.model.parameters);
  const uint64_t g_total = e.bytes(TermKind::gradients);
  std::vector<Tensor> grads = e.lora ? over_adapters(g_total, *e.lora, shapes.all_layers())
                                     : over_parameters(g_total, shapes, e.trainable_parameters);
  // The state of each trainable tensor: `copies` tensors of its gradient's elements when the state
  // is whole bytes per element besides one 8-byte step counter per tensor at most (the counters one
  // more tensor, with the first), else in proportion to the gradient.
  const uint64_t copies =
      r.optimizer.kind == StateKind::copies ? std::max<uint64_t>(r.optimizer.copies, 1) : 1;
  std::vector<uint64_t> grad_bytes;
  std::vector<uint64_t> state_elements;
  for (const Tensor& g : grads) {
    grad_bytes.push_back(g.bytes);
    for (uint64_t c = 0; c < copies; ++c) state_elements.push_back(g.elements);
  }
  const uint64_t s_total = e.bytes(TermKind::optimizer_state);
  const bool known = !grads.empty() &&
                     std::all_of(grads.begin(), grads.end(), [](const Tensor& g) { return g.elements != 0; });
  const Sized exact =
      known ? sized(s_total, state_elements, checked_mul(e.trainable_parameters, copies, "state"),
                    checked_mul(8, grads.size(), "state"))
            : Sized{};
  std::vector<std::vector<Tensor>> state(grads.size());
  if (exact.per_element) {
    for (size_t i = 0; i < grads.size(); ++i)
      for (uint64_t c = 0; c < copies; ++c)
        state[i].push_back({grads[i].group, exact.bytes[i * copies + c], 0, 0});
    if (exact.bytes.size() > state_elements.size())
      state[0].push_back({grads[0].group, exact.bytes.back(), 0, 0});
  } else {
    const std::vector<uint64_t> state_bytes = divide(s_total, grad_bytes);
    for (size_t i = 0; i < grads.size(); ++i)
      for (const uint64_t part : divide(state_bytes[i], std::vector<uint64_t>(copies, 1)))
        state[i].push_back({grads[i].group, part, 0, 0});
  }
  // The optimizer's temporaries: foreach, one per tensor (the timeline's total divided); the
  // per-tensor loop, two per tensor, the largest tensor's being the timeline's figure.
  const Transient opt = optimizer_step_transient(r, e);
  std::vector<uint64_t> temp_bytes(grads.size(), 0);
  if (opt.code == TransientCode::foreach_copy) {
    temp_bytes = divide(opt.bytes, grad_bytes);
  } else if (opt.code == TransientCode::per_tensor_copies && !grads.empty()) {
    const uint64_t half = opt.bytes / 2;
    const uint64_t per = opt.n[1];
    size_t largest = 0;
    for (size_t i = 0; i < grads.size(); ++i) {
      if (grad_bytes[i] > grad_bytes[largest]) largest = i;
      const uint64_t elements =
          g_total ? checked_mul_ratio(e.trainable_parameters, grad_bytes[i], g_total) : 0;
      temp_bytes[i] = std::min(half, checked_mul(elements, per, "timeline bytes"));
    }
    temp_bytes[largest] = half;
  }
  const bool loop_per_tensor =
      opt.code == TransientCode::adafactor_update || opt.code == TransientCode::hf_adamw_denom;
  const std::vector<LoopTensor> loop =
      loop_per_tensor ? optimizer_loop_tensors(r, e) : std::vector<LoopTensor>{};
  Activations act = activations(r, e);
  const Transient loss = loss_backward_transient(r, e);
  const Transient last = last_layer_backward_transient(r);
  const uint64_t layers = act.layers.size();

  load_weights(r, shapes, weights, b);
  std::vector<Tensor> layout_buffers = buffers(e, grads);
  for (Tensor& t : layout_buffers) b.alloc(t);
  if (r.device == Device::cuda)
    for (uint64_t i = 0; i < k_cublas_workspaces; ++i) b.alloc(k_cublas_workspace_bytes);

  bool grads_alive = false;
  for (uint8_t s = 1; s <= steps; ++s) {
    b.step = s;
    for (uint64_t m = 0; m < std::max<uint64_t>(r.grad_accum, 1); ++m) {
      b.phase = Phase::forward;
      for (Tensor& t : act.before) b.alloc(t);
      // A checkpointed layer runs its forward without saving: its intermediates (the tensors the
      // backward rebuilds) exist while it computes its output, the next layer's kept input, and
      // are freed after it: the kept inputs land between them.
      std::vector<Tensor> cache;  // autocast's cached weight copies
      for (uint64_t i = 0; i < layers; ++i) {
        if (i == 0 || act.rebuilt[i - 1].empty()) alloc_layer(b, act.layers[i]);
        if (act.rebuilt[i].empty()) continue;
        alloc_layer(b, act.rebuilt[i]);
        if (i + 1 < layers) alloc_layer(b, act.layers[i + 1]);
        for (size_t k = 0; k < act.rebuilt[i].size(); ++k) {
          Tensor& t = act.rebuilt[i][k];
          if (!act.cached_copies || k + 1 < act.rebuilt[i].size()) {
            b.free(t);
          } else if (t.bytes == act.cached_copies) {
            cache.push_back(t);  // every copy is cached (a full fine-tune)
          } else {               // LoRA: the frozen weights' copies go, the adapters' stay
            b.free(t);
            Tensor c{static_cast<int64_t>(i), act.cached_copies, 0};
            b.alloc(c);
            cache.push_back(c);
          }
        }
      }
      for (Tensor& t : act.after) b.alloc(t);
      b.phase = Phase::loss;
      for (Tensor& t : act.held) b.alloc(t);
      free_all(b, cache);  // the autocast region exits before backward
      b.phase = Phase::backward;
      free_all(b, act.held);
      if (loss.code == TransientCode::logprob_backward) {  // its input's gradient, the tile, the head's
        const uint64_t rest = loss.bytes - std::min(loss.bytes, loss.n[0] + loss.n[1]);
        const uint64_t gh = b.alloc(loss.n[0]);
        const uint64_t tile = b.alloc(loss.n[1]);
        const uint64_t gw = b.alloc(rest);
        b.free(tile, loss.n[1]);
        b.free(gw, rest);
        b.free(gh, loss.n[0]);
      } else if (loss.bytes) {
        const uint64_t two = loss.code == TransientCode::loss_and_dequant ? 2 * loss.n[0] : loss.bytes;
        const uint64_t g1 = b.alloc(two / 2);
        const uint64_t g2 = b.alloc(two - two / 2);
        const uint64_t deq = b.alloc(loss.bytes - two);
        b.free(deq, loss.bytes - two);
        b.free(g1, two / 2);
        b.free(g2, two - two / 2);
      }
      if (act.log_softmax >= 0) b.free(act.after[act.log_softmax]);
      if (act.log_softmax_input >= 0) b.free(act.after[act.log_softmax_input]);
      auto grads_of = [&](int64_t group) {
        if (grads_alive) return;
        for (Tensor& g : grads)
          if (g.group == group) b.alloc(g);
      };
      for (uint64_t i = layers; i-- > 0;) {
        alloc_layer(b, act.rebuilt[i]);
        if (i + 1 == layers) {
          const uint64_t t = b.alloc(last.bytes);
          b.free(t, last.bytes);
          for (size_t k = 0; k < act.after.size(); ++k)
            if (!act.loss_owned(k)) b.free(act.after[k]);
        }
        free_layer(b, act.rebuilt[i], act.attention_dropout);
        free_layer(b, act.layers[i], act.attention_dropout);
        grads_of(static_cast<int64_t>(i));
      }
      if (!layers)
        for (size_t k = 0; k < act.after.size(); ++k)
          if (!act.loss_owned(k)) b.free(act.after[k]);
      free_all(b, act.before);
      grads_of(-2);
      grads_of(-1);
      grads_alive = true;
      if (act.kept >= 0 && m + 1 < r.grad_accum) b.free(act.after[act.kept]);
    }
    b.phase = Phase::optimizer;
    const bool foreach = opt.code == TransientCode::foreach_copy;
    // The loops run over the named parameter tensors; a last tensor of what the shapes do not name
    // (sized()) gets its state after them.
    const bool named = !loop.empty() && (loop.size() == grads.size() || loop.size() + 1 == grads.size());
    if (named && (opt.code == TransientCode::adafactor_update || opt.code == TransientCode::hf_adamw_denom)) {
      if (opt.code == TransientCode::adafactor_update)
        replay::adafactor_loop(b, loop, adafactor_fp32_copies(r) == 4, s == 1 ? &state : nullptr);
      else
        replay::hf_adamw_loop(b, loop, opt.bytes / (opt.n[0] + opt.n[1]), s == 1 ? &state : nullptr);
      if (s == 1)
        for (size_t i = loop.size(); i < state.size(); ++i)
          for (Tensor& t : state[i]) b.alloc(t);
    } else {
      replay::optimizer_loop(b, state, temp_bytes, foreach, s == 1);
    }
    b.phase = Phase::zero_grad;
    if (!r.grads_kept) {
      free_all(b, grads);
      grads_alive = false;
    }
    if (act.kept >= 0) b.free(act.after[act.kept]);
  }
}

std::vector<StepEvent> step_events(const EstimateRequest& r, const Estimate& e, uint8_t steps) {
  std::vector<StepEvent> events;
  build_step_events(r, e, steps, events);
  return events;
}

uint64_t requested_peak(const std::vector<StepEvent>& events, uint8_t from_step) {
  uint64_t now = 0;
  uint64_t peak = 0;
  for (const StepEvent& ev : events) {
    now = ev.alloc ? now + ev.bytes : now - ev.bytes;
    if (ev.step >= from_step) peak = std::max(peak, now);
  }
  return peak;
}

}  // namespace memplan
