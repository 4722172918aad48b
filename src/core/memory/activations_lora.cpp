// Activations under LoRA: every base weight frozen, adapters on some matrices. A frozen Linear
// keeps only its weight (for its input's gradient), never its input; each adapter keeps its
// input and x.A. Measured with torch 1.13 on CPU (tests/data/torch_cpu_lora.json, from
// bench/measure_lora.py) and reproduced to the byte.

#include "core/base/checked.hpp"

#include "core/memory/hf_release_rules.hpp"
#include "core/memory/transformer_layer_model.hpp"

namespace memplan::detail {

LayerModel::Grads LayerModel::lora_grads(bool first) const {
  const LoraTargets& t = *m_opts.lora;
  const bool fused = (m_arch.fused_qkv || m_opts.litgpt) && (t.q || t.k || t.v);
  Grads g;
  g.in = !first;
  g.q = g.in || t.q || fused;
  g.k = g.in || t.k || fused;
  g.v = g.in || t.v || fused;
  g.attn = g.q || g.k || g.v;
  g.attn_out = g.attn || t.o;
  g.mlp_in = m_arch.parallel_attention ? g.in : (g.in || g.attn_out);
  g.gate = m_arch.gated_mlp && (g.mlp_in || t.gate);
  g.up = g.mlp_in || t.up;
  g.mlp_out = g.gate || g.up || t.down;
  return g;
}

// The adapted q/k/v matrices: one where the model fuses them.
std::vector<std::string> LayerModel::lora_qkv() const {
  const LoraTargets& t = *m_opts.lora;
  if (m_arch.fused_qkv)
    return (t.q || t.k || t.v) ? std::vector<std::string>{"c_attn"} : std::vector<std::string>{};
  std::vector<std::string> out;
  if (t.q) out.push_back("q");
  if (t.k) out.push_back("k");
  if (t.v) out.push_back("v");
  return out;
}

std::vector<std::string> LayerModel::lora_mlp_in() const {
  const LoraTargets& t = *m_opts.lora;
  std::vector<std::string> out;
  if (t.gate && m_arch.gated_mlp) out.push_back("gate");
  if (t.up) out.push_back("up");
  return out;
}

// B(A(x)) keeps x (A's input, counted by the caller) and x.A, B's input (batch x seq x r).
void LayerModel::lora_intermediate(Entries& e, const std::string& matrix) const {
  add_entry(
      e, [&] { return matrix + " LoRA x.A (B input, rank " + std::to_string(m_opts.lora->rank) + ")"; },
      {m_shape.s, m_opts.lora->rank}, lora_format());
}

// Lit-GPT's LoRAQKVLinear (lit_gpt/lora.py at 8641822): one A for every adapted part of the fused
// qkv (x.A is n x rank wide, kept by the grouped conv1d that applies B), and when not all of q, k,
// v are adapted zero_pad scatters the (batch, seq, adapted widths) update into the full width with
// index_copy, whose backward keeps that source (a reshape copy). Measured with
// bench/accuracy/litgpt_saved.py (saved_tensors_hooks).
void LayerModel::litgpt_qkv_adapter(Entries& e) const {
  const LoraTargets& t = *m_opts.lora;
  if (!(t.q || t.k || t.v)) return;
  const Shape& d = m_shape;
  const uint64_t parts = uint64_t(t.q) + uint64_t(t.k) + uint64_t(t.v);
  add_entry(
      e, [&] { return "qkv LoRA x.A (conv1d input, " + std::to_string(parts) + " x rank)"; },
      {d.s, checked_mul(parts, m_opts.lora->rank, "LoRA width")}, lora_format());
  if (parts == 3) return;
  const uint64_t width = (t.q ? d.qd : 0) + (t.k ? d.kvd : 0) + (t.v ? d.kvd : 0);
  add_entry(e, "qkv LoRA update before zero_pad (index_copy source, kept)", {d.s, width}, lora_format());
}

// peft >= 0.12 keeps the adapters in fp32 when the model is half (autocast_adapter_dtype=True,
// its default) and casts each adapted Linear's input to their dtype. Under autocast the adapters'
// Linear calls are cast to half like every other.
//
// peft's bitsandbytes LoRA layers cast the input only when autocast is off (`requires_conversion =
// not torch.is_autocast_enabled()`, peft 0.21.2 tuners/lora/bnb.py Linear4bit.forward): a Trainer
// with bf16=True / fp16=True runs a half model under autocast (accelerate's mixed precision), so
// there the fp32 adapters' calls are cast to half by autocast and no fp32 input copy is made.
Fmt LayerModel::lora_format() const {
  const bool half = !(m_act.cost == detail::fp32_fmt().cost);
  if (m_opts.bnb_layers && m_opts.autocast_over_half) return m_act;
  if (m_opts.lora->fp32_adapters && half && !m_opts.autocast) return detail::fp32_fmt();
  return m_act;
}

// peft's Linear.forward casts x to the adapter's dtype first (`x = self._cast_input_dtype(x,
// lora_A.weight.dtype)`, peft 0.21.2 tuners/lora/layer.py; `x.to(lora_A.weight.dtype)` before):
// under autocast the adapters are fp32 like every master weight, so a half input becomes an fp32
// copy that A's Linear casts back to half, a copy of the adapter's own; an fp32 input is cast by
// autocast alone. Either way each adapter keeps its own half copy (Lit-GPT casts nothing).
bool LayerModel::lora_copies_input() const {
  return m_opts.lora->dropout > 0.0 || (!m_opts.autocast && !(lora_format().cost == m_act.cost)) ||
         (m_opts.autocast && !m_opts.litgpt);
}

bool LayerModel::lora_shares_input(const std::vector<std::string>& modules, const Fmt& input) const {
  return !modules.empty() && !lora_copies_input() && !(m_opts.autocast && !(input.cost == m_act.cost));
}

// bitsandbytes' MatMul4Bit.forward kept (A, B) in ctx.tensors when A or B required grad
// (bitsandbytes/autograd/_functions.py, 0.39 to 0.43.1; bitsandbytes_release.hpp), so under QLoRA each frozen
// 4-bit Linear whose input needs a gradient keeps that input. The q/k/v calls share one input, so do gate and
// up; under autocast each call casts its own half copy first (compute_dtype).
void LayerModel::bnb_inputs(Entries& e, const Grads& g) const {
  const LoraTargets& t = *m_opts.lora;
  const Shape& d = m_shape;
  if (g.in && !lora_shares_input(lora_qkv(), m_res))
    linear_inputs(e, "attention norm output (kept by bitsandbytes' 4-bit q/k/v matmuls)",
                  m_arch.fused_qkv ? 1 : 3);
  if (g.attn && m_eager && !(t.o && lora_shares_input({"o"}, m_act)))
    add_entry(e, "attention output (kept by bitsandbytes' 4-bit o matmul)", {d.s, d.qd}, m_act);
  if (g.mlp_in && !m_arch.parallel_attention && !lora_shares_input(lora_mlp_in(), m_res))
    linear_inputs(e, "MLP norm output (kept by bitsandbytes' 4-bit gate/up matmuls)",
                  m_arch.gated_mlp ? 2 : 1);
  const bool relu_kept = m_arch.activation == "relu" && !m_arch.gated_mlp && g.up;
  const bool down_shared =
      t.down && !(m_drop_hidden && m_arch.ffn_dropout) && lora_shares_input({"down"}, m_act);
  if ((g.gate || g.up) && !relu_kept && !down_shared)
    add_entry(e, "MLP inner output (kept by bitsandbytes' 4-bit down matmul)", {d.s, d.ff}, m_act);
}

// Measured on an H200 (bench/accuracy/gpu_peak_contents.py, peft 0.21): TinyLlama and Mistral-7B
// in bf16 with r=16 on q and v keep two fp32 copies of each layer's attention-norm output; with
// lora_dropout 0.05 each copy becomes a 1-byte mask and the dropped fp32 copy.
void LayerModel::lora_inputs(Entries& e, const std::string& name, const std::vector<std::string>& modules,
                             uint64_t width, const Fmt& input) const {
  if (modules.empty()) return;
  const uint64_t s = m_shape.s;
  if (m_opts.lora->dropout > 0.0) {  // dropout(x): a mask; A keeps the dropped tensor (cast under autocast)
    const Fmt dropped = m_opts.autocast ? m_act : lora_format();
    const Fmt dropout_in = m_opts.autocast ? input : lora_format();
    for (const std::string& m : modules) {
      add_entry(
          e, [&] { return name + ": " + m + " LoRA dropout mask"; }, {s, width}, mask(dropout_in));
      add_entry(
          e, [&] { return name + ": " + m + " LoRA dropout output (A input)"; }, {s, width}, dropped);
    }
    return;
  }
  if (m_opts.autocast && (!(input.cost == m_act.cost) || !m_opts.litgpt)) {  // A's own half copy
    for (const std::string& m : modules)
      add_entry(
          e, [&] { return name + ": " + m + " LoRA input cast to " + m_act.name; }, {s, width}, m_act);
    return;
  }
  if (lora_copies_input()) {  // cast to the fp32 adapters, once per adapter
    for (const std::string& m : modules)
      add_entry(
          e, [&] { return name + ": " + m + " LoRA input cast to " + lora_format().name + " (A input)"; },
          {s, width}, lora_format());
    return;
  }
  add_entry(
      e, [&] { return name; }, {s, width}, input);
}

void LayerModel::lora_attention_core(Entries& e, const Grads& g) const {
  const Shape& d = m_shape;
  const LoraTargets& t = *m_opts.lora;
  const Role core = m_opts.checkpointing == Checkpointing::selective ? Role::recomputed : Role::saved;
  const bool qk = g.q || g.k;
  const char* o_input = "attention output (o LoRA input)";
  if (!m_eager) {  // the fused kernel keeps all or nothing
    if (g.attn && m_opts.litgpt) {
      litgpt_qkv(e);
      add_entry(e, t.o && !lora_copies_input() ? o_input : "attention output", {d.s, d.qd}, m_act);
      add_entry(e, "attention log-sum-exp", {d.nh, d.s}, detail::fp32_fmt());
      if (t.o && lora_copies_input()) lora_inputs(e, "attention output", {"o"}, d.qd, m_act);
    } else if (g.attn) {
      sdpa_qkv(e);
      add_entry(e, t.o && !lora_copies_input() ? o_input : "attention output", {d.s, d.qd}, m_act);
      add_entry(e, "attention log-sum-exp", {d.nh, d.s}, detail::fp32_fmt());
      if (t.o && lora_copies_input()) lora_inputs(e, "attention output", {"o"}, d.qd, m_act);
    } else if (t.o) {
      lora_inputs(e, o_input, {"o"}, d.qd, m_act);
    }
    return;
  }
  // scores = q k^T keeps each operand for the other's gradient; P v keeps P for v's, v for P's.
  if (g.k) add_entry(e, "q (batched-matmul copy)", {d.s, d.qd}, m_act);
  if (g.q) add_entry(e, "k (batched-matmul copy, all heads)", {d.s, d.qd}, m_act);
  if (qk && m_arch.attn_softcap > 0.0)  // Gemma 2: tanh(scores / cap) keeps its output
    add_entry(e, "soft-capped scores (tanh output, kept by tanh)", {d.nh, d.s, d.s}, m_act, core);
  if (qk && hf_eager_max_keeps_scores(m_arch.model_type, m_opts.transformers))
    add_entry(e, "masked scores (kept by OPT's torch.max, transformers < 4.49)", {d.nh, d.s, d.s},
              m_opts.autocast ? detail::fp32_fmt() : m_act, core);
  if (qk || (g.v && !m_drop_attn)) {
    if (eager_softmax_fp32()) {
      add_entry(e, "softmax probabilities", {d.nh, d.s, d.s}, detail::fp32_fmt(), core);
      add_entry(
          e, [&] { return "probabilities cast to " + m_act.name; }, {d.nh, d.s, d.s}, m_act, core);
    } else {
      add_entry(e, "softmax probabilities", {d.nh, d.s, d.s}, m_act, core);
    }
  }
  if (m_drop_attn) {
    if (qk) add_entry(e, "attention dropout mask", {d.nh, d.s, d.s}, mask(m_act), core);
    if (g.v) add_entry(e, "attention dropout output", {d.nh, d.s, d.s}, m_act, core);
  }
  if (qk) add_entry(e, "v (batched-matmul copy, all heads)", {d.s, d.qd}, m_act);
  if (t.o) lora_inputs(e, o_input, {"o"}, d.qd, m_act);
}

void LayerModel::lora_mlp_core(Entries& e, const Grads& g) const {
  const Shape& d = m_shape;
  const std::string& fn = m_arch.activation;
  const bool ffn_drop = m_drop_hidden && m_arch.ffn_dropout;
  const bool down_input = m_opts.lora->down && !ffn_drop;
  if (m_arch.gated_mlp) {
    if (g.gate)
      ff_entry(
          e, [] { return std::string("gate projection output"); }, m_mlp);
    if (g.up)
      ff_entry(
          e, [&] { return fn + "(gate)"; }, m_mlp);
    if (g.gate)
      ff_entry(
          e, [] { return std::string("up projection output"); }, m_mlp);
    if (down_input) lora_inputs(e, fn + "(gate) x up (down LoRA input)", {"down"}, d.ff, m_mlp);
  } else if (fn == "relu") {
    if (g.up) add_entry(e, "ReLU output", {d.s, d.ff}, m_mlp);
    if (down_input && (lora_copies_input() || !g.up)) lora_inputs(e, "ReLU output", {"down"}, d.ff, m_mlp);
  } else {
    if (g.up && m_arch.python_gelu && !m_opts.litgpt)
      gelu_new(e);
    else if (g.up)
      add_entry(
          e, [&] { return "up projection output (" + fn + " input)"; }, {d.s, d.ff}, m_mlp);
    if (down_input) lora_inputs(e, fn + " output (down LoRA input)", {"down"}, d.ff, m_mlp);
  }
  if (m_arch.experts > 0 && (g.gate || g.up) && m_opts.runtime != Runtime::cpu_torch113) moe_routing(e, true);
  if (ffn_drop) {
    if (g.gate || g.up) add_entry(e, "MLP inner dropout mask", {d.s, d.ff}, mask(m_act));
    if (m_opts.lora->down) add_entry(e, "MLP inner dropout output (down LoRA input)", {d.s, d.ff}, m_act);
  }
}

// One layer with frozen base weights: a frozen Linear keeps only its weight (for its input's
// gradient); an adapted one's LoRA path keeps its input (one half copy per call under
// autocast) and x.A.
Entries LayerModel::lora_layer(bool first) const {
  const LoraTargets& t = *m_opts.lora;
  const Grads g = lora_grads(first);
  const std::vector<std::string> qkv = lora_qkv(), mlp = lora_mlp_in();
  const bool fed_hidden = first && m_arch.vocab == 0;
  Entries e;
  e.record = m_opts.record;
  if (m_arch.norm_first) {
    norm(e, "attention norm", g.in, true);
    if (m_opts.litgpt && !qkv.empty())  // one LoRAQKVLinear adapter for all of q, k, v
      lora_inputs(e, "attention norm output (qkv LoRA input)", {"qkv"}, m_shape.h, m_res);
    else
      lora_inputs(e, "attention norm output (q/k/v LoRA input)", qkv, m_shape.h, m_res);
  } else if (!(fed_hidden && !m_opts.autocast &&
               !lora_copies_input())) {  // the model's input is no activation
    lora_inputs(e, "layer input (q/k/v LoRA input)", qkv, m_shape.h, m_res);
  }
  qk_norms(e, g.q, g.k);
  if (m_opts.litgpt)
    litgpt_qkv_adapter(e);
  else
    for (const std::string& m : qkv) lora_intermediate(e, m);
  lora_attention_core(e, g);
  if (t.o) lora_intermediate(e, "o");
  if (sandwich_norms()) norm(e, "post-attention norm (attention output)", g.attn_out, true);
  if (m_drop_hidden && g.attn_out)
    add_entry(e, "attention residual dropout mask", {m_shape.s, m_shape.h}, mask(m_act));
  if (!m_arch.norm_first) norm(e, "attention norm (post-LN)", g.in || g.attn_out, true);
  if (m_arch.norm_first) {
    if (m_arch.parallel_attention)
      norm(e, "MLP norm (same input)", g.in, false);
    else
      norm(e, "MLP norm", g.mlp_in, true);
    lora_inputs(e, "MLP norm output (MLP LoRA input)", mlp, m_shape.h, m_res);
  } else {
    lora_inputs(e, "attention norm output (MLP LoRA input)", mlp, m_shape.h, m_res);
  }
  for (const std::string& m : mlp) lora_intermediate(e, m);
  lora_mlp_core(e, g);
  if (t.down) lora_intermediate(e, "down");
  if (sandwich_norms()) norm(e, "post-feedforward norm (MLP output)", g.mlp_out, true);
  if (m_opts.bnb_4bit && m_arch.norm_first) bnb_inputs(e, g);
  if (m_drop_hidden && g.mlp_out)
    add_entry(e, "MLP residual dropout mask", {m_shape.s, m_shape.h}, mask(m_act));
  if (!m_arch.norm_first) norm(e, "MLP norm (post-LN)", g.mlp_in || g.mlp_out, true);
  return e;
}

// Each adapted matrix of one layer: f(input needs a gradient, in, out), in the layer's order.
template <typename F>
void LayerModel::each_adapter(const Grads& g, F&& f) const {
  const Shape& d = m_shape;
  const LoraTargets& t = *m_opts.lora;
  if (m_arch.fused_qkv) {
    if (t.q || t.k || t.v) f(g.in, d.h, checked_add(d.qd, checked_mul(2, d.kvd, "weights"), "weights"));
  } else {
    if (t.q) f(g.in, d.h, d.qd);
    if (t.k) f(g.in, d.h, d.kvd);
    if (t.v) f(g.in, d.h, d.kvd);
  }
  if (t.o) f(g.attn, d.qd, d.h);
  if (t.gate && m_arch.gated_mlp) f(g.mlp_in, d.h, d.ff);
  if (t.up) f(g.mlp_in, d.h, d.ff);
  if (t.down) f(g.gate || g.up, d.ff, d.h);
}

// Half weight copies autocast keeps under LoRA in one layer: a frozen matrix's when its input
// needs a gradient; an adapter's A likewise, its B always (x.A needs one).
uint64_t LayerModel::lora_layer_weight_elements(bool first) const {
  const Shape& d = m_shape;
  const uint64_t r = m_opts.lora->rank;
  const Grads g = lora_grads(first);
  const uint64_t qkv_out = checked_add(d.qd, checked_mul(2, d.kvd, "weights"), "weights");
  uint64_t n = 0;
  auto add = [&n](uint64_t in, uint64_t out) {
    n = checked_add(n, checked_mul(in, out, "weights"), "weights");
  };
  if (g.in) add(d.h, qkv_out);
  if (g.attn) add(d.qd, d.h);
  if (experts_uncast()) {  // routed experts not autocast: the router's and shared expert's copies
    const uint64_t shared = m_arch.shared_intermediate;
    if (g.mlp_in) {
      add(d.h, m_arch.experts);
      add(2 * d.h, shared);
      if (shared > 0 && m_arch.model_type == "qwen2_moe") add(d.h, 1);
    }
    if (g.gate || g.up) add(shared, d.h);
  } else {
    if (g.mlp_in) add(m_arch.gated_mlp ? 2 * d.h : d.h, d.ff);
    if (g.gate || g.up) add(d.ff, d.h);
  }
  each_adapter(g, [&](bool input_grad, uint64_t in, uint64_t out) {
    if (input_grad) add(r, in);
    add(r, out);
  });
  return n;
}

// One layer's adapters, A (rank x in) and B (out x rank) of every adapted matrix: they require grad,
// so autocast caches their half casts wherever the forward runs, checkpointed or not.
uint64_t LayerModel::lora_adapter_elements() const {
  const uint64_t r = m_opts.lora->rank;
  uint64_t n = 0;
  each_adapter(lora_grads(false), [&](bool, uint64_t in, uint64_t out) {
    n = checked_add(n, checked_mul(r, checked_add(in, out, "weights"), "weights"), "weights");
  });
  return n;
}

uint64_t LayerModel::lora_weight_elements() const {
  uint64_t total =
      checked_add(lora_layer_weight_elements(true),
                  checked_mul(m_arch.layers - 1, lora_layer_weight_elements(false), "weights"), "weights");
  // the frozen LM head's (for the final norm's gradient) or the encoder head's
  total = checked_add(total, head_weight_elements(), "weights");
  return total;
}
}  // namespace memplan::detail
