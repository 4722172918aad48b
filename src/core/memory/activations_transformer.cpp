// Activations of a transformer: a ledger of what autograd keeps in one layer, plus what lives
// outside the layers (embeddings, final norm, logits, loss: activations_lm_head.cpp).
//
// The rules follow what PyTorch saves for backward, measured with saved_tensors_hooks on
// GPT-2-style decoders, LLaMA-style blocks and torch's nn.TransformerEncoderLayer
// (tests/data/torch_cpu_reference.json; reproduced to the byte for batch > 1):
//   LayerNorm   keeps its input and mean/rstd (fp32, 2 per token).
//   RMSNorm     (HF style: x.float() * rsqrt(mean(x^2) + eps), cast back, times weight) keeps the
//               fp32 input, rsqrt (1 per token) and the normalised tensor; torch 1.13 also x^2.
//   Linear      keeps its input; under autocast a half copy made per Linear call (separate
//               q/k/v projections make three copies, a fused one makes one).
//   eager attn  q, k, v as batched-matmul copies, softmax probabilities (heads x s x s), the
//               attention output; scores themselves are not kept (scaling keeps a scalar).
//   sdpa        q, k, v, output, log-sum-exp (heads x s, fp32).
//   MLP         ReLU: its output; GELU/SiLU: input and output; gated: gate, act(gate), up, product.
//   dropout     a mask (CUDA: 1-byte bool; torch CPU: the input's dtype), and the next consumer
//               keeps the dropped tensor.
//   residual    adds keep nothing.

#include <algorithm>
#include <cstdio>
#include <string_view>

#include <fmt/format.h>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"
#include "core/memory/activations.hpp"

#include "core/memory/activation_ledger.hpp"
#include "core/memory/transformer_layer_model.hpp"

namespace memplan {
namespace detail {

LayerModel::LayerModel(const TransformerArch& arch, const ActivationOptions& opts)
    : m_arch(arch), m_opts(opts) {
  m_act = Fmt{opts.act_format, opts.act_cost};
  m_res = opts.autocast ? detail::fp32_fmt() : m_act;
  m_mlp = opts.bnb_layers && opts.lora ? m_res : m_act;
  uint64_t hd = arch.resolved_head_dim();
  uint64_t ff = arch.intermediate ? arch.intermediate : checked_mul(4, arch.hidden, "intermediate");
  if (arch.experts > 0)  // each token runs k routed experts (and the shared ones): their widths add up
    ff = checked_add(checked_mul(arch.expert_intermediate ? arch.expert_intermediate : ff,
                                 std::max<uint64_t>(1, arch.experts_per_token), "intermediate"),
                     arch.shared_intermediate, "intermediate");
  m_shape = Shape{opts.seq,
                  arch.hidden,
                  arch.heads,
                  checked_mul(arch.heads, hd, "q width"),
                  checked_mul(arch.resolved_kv_heads(), hd, "kv width"),
                  ff,
                  arch.vocab};
  m_eager = opts.attention == Attention::eager || opts.runtime == Runtime::cpu_torch113;
  m_drop_hidden = opts.dropout && arch.hidden_dropout > 0.0;
  m_drop_attn = opts.dropout && arch.attention_dropout > 0.0;
}

// The dropout mask for a tensor of format f.
Fmt LayerModel::mask(const Fmt& f) const {
  if (m_opts.runtime == Runtime::cuda) return Fmt{"bool", {1, 1}};
  return f;
}

// Gemma's RMSNorm (transformers 5.24.0 models/gemma/modeling_gemma.py GemmaRMSNorm, copied by
// Gemma 2 and 3): `output = self._norm(x.float()); output = output * (1.0 + self.weight.float())`,
// then type_as(x): the weight multiply runs in fp32, so the normalised tensor it keeps is fp32
// (Llama's RMSNorm casts back first and multiplies in the input's format).
bool LayerModel::norm_multiplies_fp32() const {
  const std::string& t = m_arch.model_type;
  return !m_opts.litgpt && (t == "gemma" || t == "gemma2" || t == "gemma3" || t == "gemma3_text");
}

// Gemma 2 and 3's four norms a layer (models/gemma2/modeling_gemma2.py Gemma2DecoderLayer):
// besides input_layernorm and pre_feedforward_layernorm (the usual two), post_attention_layernorm
// normalises the attention output and post_feedforward_layernorm the MLP output before each
// residual add: each keeps what an RMSNorm keeps of its input.
bool LayerModel::sandwich_norms() const {
  const std::string& t = m_arch.model_type;
  return !m_opts.litgpt && m_arch.norm == "rmsnorm" && (t == "gemma2" || t == "gemma3" || t == "gemma3_text");
}

// A norm reading the residual stream. input_grad: its input requires grad (false for the first
// layer of a stack fed hidden states); count_input: the input storage is not already counted.
void LayerModel::norm(Entries& e, const char* name_text, bool input_grad, bool count_input) const {
  const Shape& d = m_shape;
  const std::string_view name = name_text;
  if (m_opts.lora && !input_grad) return;  // frozen weight, input needs no gradient: keeps nothing
  if (m_arch.norm == "rmsnorm" && m_opts.litgpt) {
    // Lit-GPT's RMSNorm: x * rsqrt(mean(x * x) + eps) * weight in the model's format. x * x and
    // x * rsqrt keep x; torch 2.1's mean keeps its input x * x (pytorch/pytorch#109935, torch 2.2).
    if (input_grad) {
      if (count_input)
        add_entry(
            e, [&] { return std::string(name) + " input"; }, {d.s, d.h}, m_res);
      add_entry(
          e, [&] { return std::string(name) + " input squared (torch 2.1's mean keeps its input)"; },
          {d.s, d.h}, m_res);
      add_entry(
          e, [&] { return std::string(name) + " rsqrt"; }, {d.s, 1}, m_res);
    }
    if (!m_opts.lora)
      add_entry(
          e, [&] { return std::string(name) + " normalised (weight-multiply input)"; }, {d.s, d.h}, m_res);
    return;
  }
  if (m_arch.norm == "rmsnorm") {
    if (input_grad) {
      bool already_fp32 = m_res.cost == detail::fp32_fmt().cost;
      if (count_input || !already_fp32)
        add_entry(
            e, [&] { return std::string(name) + (already_fp32 ? " input" : " input upcast to fp32"); },
            {d.s, d.h}, detail::fp32_fmt());
      if (m_opts.runtime == Runtime::cpu_torch113)
        add_entry(
            e, [&] { return std::string(name) + " input squared (torch 1.13 mean keeps its input)"; },
            {d.s, d.h}, detail::fp32_fmt());
      add_entry(
          e, [&] { return std::string(name) + " rsqrt"; }, {d.s, 1}, detail::fp32_fmt());
    }
    if (!m_opts.lora)  // kept for the weight's gradient only
      add_entry(
          e, [&] { return std::string(name) + " normalised (weight-multiply input)"; }, {d.s, d.h},
          norm_multiplies_fp32() ? detail::fp32_fmt() : m_res);
    return;
  }
  if (input_grad && count_input)
    add_entry(
        e, [&] { return std::string(name) + " input"; }, {d.s, d.h}, m_res);
  add_entry(
      e, [&] { return std::string(name) + " mean and rstd"; }, {d.s, 2}, detail::fp32_fmt());
}

// What the Linear layers reading a residual-format tensor keep: one storage, or under
// autocast one half copy per Linear call.
void LayerModel::linear_inputs(Entries& e, const char* name, uint64_t calls) const {
  if (!m_opts.autocast) {
    add_entry(e, name, {m_shape.s, m_shape.h}, m_res);
    return;
  }
  for (uint64_t i = 0; i < calls; ++i)
    add_entry(
        e,
        [&] {
          return name + (" cast to " + m_act.name) +
                 (calls > 1 ? " (" + std::to_string(i + 1) + " of " + std::to_string(calls) + ")"
                            : std::string());
        },
        {m_shape.s, m_shape.h}, m_act);
}

void LayerModel::mlp_core(Entries& e) const {
  const Shape& d = m_shape;
  const std::string& fn = m_arch.activation;
  if (m_arch.gated_mlp) {
    ff_entry(
        e, [] { return std::string("gate projection output"); }, m_act);
    ff_entry(
        e, [&] { return fn + "(gate)"; }, m_act);
    ff_entry(
        e, [] { return std::string("up projection output"); }, m_act);
    ff_entry(
        e, [&] { return fn + "(gate) x up (down projection input)"; }, m_act);
  } else if (fn == "relu") {
    add_entry(e, "ReLU output (down projection input)", {d.s, d.ff}, m_act);
  } else if (fn == "quick_gelu") {
    // CLIP's QuickGELUActivation, x * sigmoid(1.702 x) in Python ops: sigmoid keeps its output, the
    // multiply both operands (bench/accuracy/vit_saved.py).
    add_entry(e, "up projection output (quick_gelu input)", {d.s, d.ff}, m_act);
    add_entry(e, "quick_gelu sigmoid(1.702 x)", {d.s, d.ff}, m_act);
    add_entry(e, "quick_gelu output (down projection input)", {d.s, d.ff}, m_act);
  } else if (m_arch.python_gelu && !m_opts.litgpt) {
    gelu_new(e);
    add_entry(e, "gelu_new output (down projection input)", {d.s, d.ff}, m_act);
  } else {
    add_entry(
        e, [&] { return "up projection output (" + fn + " input)"; }, {d.s, d.ff}, m_act);
    add_entry(
        e, [&] { return fn + " output (down projection input)"; }, {d.s, d.ff}, m_act);
  }
  if (m_arch.experts > 0 && m_opts.runtime != Runtime::cpu_torch113) moe_routing(e, false);
  if (m_drop_hidden && m_arch.ffn_dropout) {
    add_entry(e, "MLP inner dropout mask", {d.s, d.ff}, mask(m_act));
    add_entry(e, "MLP inner dropout output", {d.s, d.ff}, m_act);
  }
}

// Hugging Face's gelu_new (NewGELUActivation: GPT-2, GPT-J, Phi-1.5/2) is written out in Python,
// 0.5 x (1 + tanh(c (x + 0.044715 x^3))), and autograd keeps its pieces: x (pow's input), the
// tanh output, 0.5 x and 1 + tanh (the last multiply's operands). Under autocast pow runs in fp32
// (its input cast to an fp32 copy), and what follows it is fp32 by type promotion but 0.5 x.
// Measured on an H200 (GPT-2, bf16: five batch x seq x 3072 tensors per layer where F.gelu keeps
// two; bench/accuracy/gpu_peak_contents.py). The output is counted by the caller.
void LayerModel::gelu_new(Entries& e) const {
  const Shape& d = m_shape;
  const bool half = !(m_act.cost == detail::fp32_fmt().cost);
  const Fmt promoted = m_opts.autocast && half ? detail::fp32_fmt() : m_act;
  add_entry(e,
            m_opts.autocast && half ? "up projection output cast to fp32 (gelu_new's pow input)"
                                    : "up projection output (gelu_new input)",
            {d.s, d.ff}, promoted);
  add_entry(e, "gelu_new tanh output", {d.s, d.ff}, promoted);
  add_entry(e, "gelu_new 1 + tanh", {d.s, d.ff}, promoted);
  add_entry(e, "gelu_new 0.5 x", {d.s, d.ff}, m_act);
}

// One layer. first: layer 0 (its input may be the model's input, which is not an activation).
Entries LayerModel::layer(bool first) const {
  if (m_opts.lora) return lora_layer(first);
  Entries e;
  e.record = m_opts.record;
  const Shape& d = m_shape;
  const bool fed_hidden = first && m_arch.vocab == 0;
  const uint64_t qkv_calls = m_arch.fused_qkv || m_opts.litgpt ? 1 : 3;
  const uint64_t mlp_calls = mlp_linear_calls();
  if (m_arch.norm_first) {
    norm(e, "attention norm", !fed_hidden, !fed_hidden);
    linear_inputs(e, "attention norm output (q/k/v projection input)", qkv_calls);
  } else {
    linear_inputs(e, "layer input (q/k/v projection input)", qkv_calls);
  }
  qk_norms(e, true, true);
  attention_core(e);
  if (sandwich_norms()) norm(e, "post-attention norm (attention output)", true, true);
  if (m_drop_hidden) add_entry(e, "attention residual dropout mask", {d.s, d.h}, mask(m_act));
  if (!m_arch.norm_first) norm(e, "attention norm (post-LN)", true, true);
  if (m_arch.norm_first) {
    if (m_arch.parallel_attention)
      norm(e, "MLP norm (same input)", !fed_hidden, false);
    else
      norm(e, "MLP norm", true, true);
    linear_inputs(e, "MLP norm output (MLP input)", mlp_calls);
  } else {
    linear_inputs(e, "attention norm output (MLP input)", mlp_calls);
  }
  mlp_core(e);
  if (sandwich_norms()) norm(e, "post-feedforward norm (MLP output)", true, true);
  if (m_drop_hidden) add_entry(e, "MLP residual dropout mask", {d.s, d.h}, mask(m_act));
  if (!m_arch.norm_first) norm(e, "MLP norm (post-LN)", true, true);
  return e;
}

// Weights autocast copies to half and keeps (those whose input requires grad).
uint64_t LayerModel::autocast_weight_elements() const {
  if (m_opts.lora) return lora_weight_elements();
  const Shape& d = m_shape;
  uint64_t mlp = mlp_weight_elements();
  uint64_t qkv = checked_mul(d.h, checked_add(d.qd, checked_mul(2, d.kvd, "weights"), "weights"), "weights");
  uint64_t per_layer =
      checked_add(checked_add(qkv, checked_mul(d.qd, d.h, "weights"), "weights"), mlp, "weights");
  uint64_t total = checked_mul(m_arch.layers, per_layer, "weights");
  if (m_arch.vocab == 0 && !m_arch.norm_first) total -= qkv;  // its input needs no gradient
  return checked_add(total, head_weight_elements(), "weights");
}

// Extra compute of selective checkpointing: the attention matmuls (QK^T and PV, 4 s qd flops
// per token) again, over a step of 3 forward passes' worth of flops.
double LayerModel::selective_fraction() const {
  const Shape& d = m_shape;
  double mlp = (m_arch.gated_mlp ? 3.0 : 2.0) * double(d.h) * double(d.ff);
  double dense = double(d.h) * double(d.qd + 2 * d.kvd) + double(d.qd) * double(d.h) + mlp;
  double attn = 4.0 * double(d.s) * double(d.qd);
  return attn / (3.0 * (2.0 * dense + attn));
}

}  // namespace detail

namespace {

using detail::add_entry;
using detail::Entries;
using detail::LayerModel;
using detail::Shape;

void validate(const TransformerArch& arch, const ActivationOptions& opts) {
  if (arch.layers == 0)
    throw Error("architecture", "the number of layers is 0 (give " + field_ref(Field::layers) +
                                    " or a model with its config)");
  if (arch.hidden == 0)
    throw Error("architecture", "the hidden size is 0 (give " + field_ref(Field::hidden) + ")");
  if (arch.heads == 0)
    throw Error("architecture", "the number of attention heads is 0 (give " + field_ref(Field::heads) + ")");
  if (arch.resolved_head_dim() == 0)
    throw Error("architecture", "the head dimension is 0 (hidden smaller than heads?)");
  if (opts.seq == 0)
    throw Error(Field::seq, "the sequence length is 0 (expected tokens per sample, e.g. 2048)");
  if (opts.act_cost.num == 0 || opts.act_cost.den == 0)
    throw Error("activations", "the activation format has no size");
  if (opts.lora && opts.lora->rank == 0)
    throw Error(Field::lora, "the rank is 0 (expected at least 1, e.g. 16)");
  if (opts.lora && !opts.lora->any())
    throw Error(Field::lora_targets, "no matrix is adapted (expected e.g. q,v)");
}

}  // namespace

ActivationLedger transformer_activations(const TransformerArch& arch, const ActivationOptions& opts) {
  validate(arch, opts);
  LayerModel model(arch, opts);
  const Shape& d = model.shape();

  Entries typical = model.layer(false);
  Entries first = model.layer(true);
  Entries outside = model.outside();

  ActivationLedger ledger;
  ledger.layers = arch.layers;
  uint64_t layer_ps = detail::per_sample_bytes(typical, Role::saved);
  uint64_t first_ps = detail::per_sample_bytes(first, Role::saved);
  uint64_t recompute_ps = detail::per_sample_bytes(typical, Role::recomputed);
  if (opts.checkpointing == Checkpointing::full) {
    typical.set_role(Role::recomputed);
    Entries kept;
    kept.record = opts.record;
    // unsloth_zoo 2026.10.9 gradient_checkpointing.py UnslothCheckpointFunction: every layer's input
    // but the last one's goes to a pinned CPU buffer; backward reloads them into GPU_BUFFERS and,
    // with 512 MiB free, a second one for double buffering. The last layer's input and the two
    // buffers are what stays on the GPU (after the layers).
    if (opts.offloaded_checkpoints) {
      add_entry(outside, "the last layer's input (checkpoint, kept on the GPU; the others offloaded)",
                {d.s, d.h}, model.res());
      add_entry(outside, "unsloth's two GPU reload buffers for the offloaded layer inputs", {2, d.s, d.h},
                model.res());
    } else {
      add_entry(kept, "layer input (checkpoint)", {d.s, d.h}, model.res());
    }
    recompute_ps = layer_ps;
    layer_ps = first_ps = detail::per_sample_bytes(kept, Role::saved);
    kept.append(typical);
    typical = std::move(kept);
    ledger.recompute_fraction = 1.0 / 3.0;
    if (opts.record)
      ledger.notes.push_back(
          "full checkpointing keeps one input per layer and recomputes the layer in backward: "
          "one extra forward pass per step, about 30% more compute (33% with backward = 2x forward); "
          "one layer's activations are rebuilt at a time (recompute_bytes)");
  } else if (opts.checkpointing == Checkpointing::selective) {
    ledger.recompute_fraction = model.eager() ? model.selective_fraction() : 0.0;
  }
  if (opts.record && opts.checkpointing == Checkpointing::selective) {
    const std::string pct = fmt::format("{:.1f}%", ledger.recompute_fraction * 100.0);
    ledger.notes.push_back(
        model.eager() ? "selective checkpointing recomputes the attention core (scores, softmax, "
                        "attention dropout) in backward: about " +
                            std::string(pct) + " more compute"
                      : "selective checkpointing changes nothing with fused attention (sdpa keeps no "
                        "s x s matrix)");
  }

  uint64_t outside_saved = detail::per_sample_bytes(outside, Role::saved);
  uint64_t outside_held = detail::per_sample_bytes(outside, Role::held);
  uint64_t saved =
      checked_add(checked_mul(arch.layers - 1, layer_ps, "activation bytes"), first_ps, "activation bytes");
  saved = checked_add(saved, outside_saved, "activation bytes");
  ledger.saved_bytes_per_sample = saved;
  ledger.held_bytes_per_sample = outside_held;
  // torch < 1.11: log-softmax's input (the copy of s - 1 positions before transformers 4.49; else
  // the fp32 upcast; else the logits, unless the training loop keeps them anyway) is saved, and
  // freed with log-softmax in the loss's backward.
  const bool upcast = opts.fp32_logits && !(model.act().cost == detail::fp32_fmt().cost);
  const uint64_t loss_elems = checked_mul(model.loss_positions(), d.vocab, "logits");
  if (opts.softmax_keeps_input && arch.causal && d.vocab > 0 && opts.loss == Loss::plain &&
      (upcast || !opts.keep_logits || opts.loss_shifted_copy))
    ledger.log_softmax_input_bytes_per_sample =
        opts.loss_shifted_copy
            ? bytes_for(loss_elems, model.loss_format().cost, "activation bytes")
            : bytes_for(checked_mul(d.s, d.vocab, "logits"),
                        upcast ? detail::fp32_fmt().cost : model.act().cost, "activation bytes");
  if (opts.keep_logits && arch.causal && d.vocab > 0 && opts.loss == Loss::plain)
    ledger.kept_bytes_per_sample = bytes_for(checked_mul(d.s, d.vocab, "logits"),
                                             model.returned_logits_format().cost, "activation bytes");
  // The loss's input: the logits of a causal LM; otherwise the last hidden state, read in fp32 by
  // a loss the user writes (its gradient is where backward starts).
  if (arch.causal && d.vocab > 0 && opts.loss == Loss::plain)
    ledger.loss_input_bytes_per_sample = bytes_for(loss_elems, model.loss_format().cost, "activation bytes");
  else if (arch.causal && d.vocab > 0 && opts.loss == Loss::chunked && opts.torchtune)
    ledger.loss_input_bytes_per_sample = bytes_for(checked_mul(model.torchtune_chunk(), d.vocab, "logits"),
                                                   detail::fp32_fmt().cost, "activation bytes");
  else if (arch.causal && d.vocab > 0 && opts.loss == Loss::chunked)
    ledger.loss_input_bytes_per_sample =
        bytes_for(checked_mul(std::min<uint64_t>(d.s, k_loss_chunk), d.vocab, "logits"),
                  opts.litgpt ? detail::fp32_fmt().cost : model.act().cost, "activation bytes");
  else if (arch.causal && d.vocab > 0)
    ledger.loss_input_bytes_per_sample = 0;  // fused: no logits gradient as a whole
  else
    ledger.loss_input_bytes_per_sample =
        bytes_for(checked_mul(d.s, d.h, "output"), detail::fp32_fmt().cost, "activation bytes");
  ledger.bytes_per_sample =
      checked_add(checked_add(saved, outside_held, "activation bytes"), recompute_ps, "activation bytes");
  ledger.total_bytes = checked_mul(opts.batch, ledger.bytes_per_sample, "activation bytes");
  ledger.layer_bytes = checked_mul(opts.batch, layer_ps, "activation bytes");
  ledger.first_layer_bytes = checked_mul(opts.batch, first_ps, "activation bytes");
  ledger.recompute_bytes = checked_mul(opts.batch, recompute_ps, "activation bytes");
  if (opts.autocast) {
    uint64_t copies = model.autocast_weight_elements();
    // Full checkpointing runs the layers' forward without grad: autograd keeps no weight copy for
    // them, only the LM head's and, during backward, the copies of the one layer rebuilt. Autocast's
    // cache still holds the casts of the weights that require grad (all of them in a full fine-tune,
    // the adapters under LoRA) until its region exits: layer_cached_copy_bytes.
    if (opts.checkpointing == Checkpointing::full) {
      const uint64_t head = model.head_weight_elements();
      const uint64_t per_layer =
          opts.lora ? model.lora_layer_weight_elements(false) : (copies - head) / arch.layers;
      copies = head + per_layer;
      ledger.layer_weight_copy_bytes = bytes_for(per_layer, model.act().cost, "autocast weight copies");
      ledger.layer_cached_copy_bytes =
          opts.lora ? bytes_for(model.lora_adapter_elements(), model.act().cost, "autocast weight copies")
                    : ledger.layer_weight_copy_bytes;
    }
    ledger.fixed_bytes = bytes_for(copies, model.act().cost, "autocast weight copies");
  }
  if (!opts.record) return ledger;
  ledger.per_layer = detail::to_rows(typical, opts.batch);
  ledger.outside_layers = detail::to_rows(outside, opts.batch);

  // Modelling choices, stated.
  auto& n = ledger.notes;
  n.push_back(
      "counts what autograd keeps for backward, each storage once, in the format the recipe produces; "
      "parameters and the model's input are not activations");
  if (model.eager())
    n.push_back(
        opts.attention == Attention::sdpa
            ? "torch 1.13 on CPU has only the math path of sdpa: the same tensors as eager attention"
            : "eager attention keeps q, k, v (batched-matmul copies; grouped k/v repeated to all heads), the "
              "softmax probabilities (heads x s x s) and the attention output");
  else
    n.push_back("fused attention (sdpa) keeps q, k, v, its output and the log-sum-exp; no s x s matrix");
  if (opts.autocast) {
    n.push_back("autocast: residual stream and norms stay fp32, matmul outputs are " + opts.act_format +
                "; each Linear keeps a " + opts.act_format + " copy of its input");
    n.push_back("autocast keeps a " + opts.act_format +
                " copy of each weight matrix for backward: " + "batch independent, in fixed_bytes");
  }
  if (!(opts.transformers == TransformersRelease{}) && arch.causal && d.vocab > 0 &&
      opts.loss == Loss::plain) {
    const bool half = !(model.act().cost == detail::fp32_fmt().cost);
    std::string t =
        "transformers " + to_string(opts.transformers) + " (" + field_ref(Field::transformers) +
        "): cross-entropy reads the logits in " +
        (opts.fp32_logits && half ? std::string("fp32 (an upcast copy") +
                                        (opts.logits_half_dropped ? ", the half logits dropped)" : ")")
                                  : model.act().name + " (no upcast)");
    if (opts.loss_shifted_copy) t += ", through a copy of logits[..., :-1, :] (s - 1 positions)";
    n.push_back(t);
  }
  if (opts.softmax_keeps_input)
    n.push_back("torch before 1.11 (" + field_ref(Field::torch) +
                "): softmax and log-softmax keep their input for backward besides their output");
  if (opts.autocast && opts.checkpointing == Checkpointing::full)
    n.push_back(std::string("autocast + full checkpointing: autocast's cache keeps the half copy of every ") +
                (opts.lora ? "adapter" : "weight") +
                " the checkpointed forward casts until its region exits after the loss (the forward and "
                "loss phases' transient)");
  if (opts.dropout && (arch.hidden_dropout > 0.0 || arch.attention_dropout > 0.0))
    n.push_back(opts.runtime == Runtime::cuda ? "dropout keeps a 1-byte mask per element (CUDA fused dropout)"
                                              : "dropout keeps a mask in its input's dtype (torch CPU)");
  if (arch.vocab == 0)
    n.push_back("no vocabulary: the stack is fed hidden states (no embeddings, no LM head)");
  if (arch.causal && arch.vocab > 0)
    n.push_back(
        "the loss keeps log-softmax of batch x seq x vocab; the logits it reads are alive too (held)");
  if (opts.lora)
    n.push_back(
        "LoRA r=" + std::to_string(opts.lora->rank) + " on " + lora_target_names(*opts.lora, arch) +
        ": base weights frozen, so frozen Linears keep no input and layer 0 keeps only what its adapters "
        "need; each adapter keeps its input and x.A (batch x seq x r)");
  if (opts.litgpt)
    n.push_back(
        "Lit-GPT 8641822 on Fabric 2.1 and torch 2.1 (framework litgpt): RMSNorm in the model's format "
        "with torch 2.1's mean keeping x*x, one fused qkv Linear (v a view of its output), LoRAQKVLinear's "
        "one dropout and zero_pad source, fp32 logits by chunks (Fabric converts the output), F.gelu");
  if (arch.intermediate == 0) n.push_back("intermediate size unknown: 4 x hidden assumed");
  if (arch.experts > 0)
    n.push_back("mixture of experts: MLP activations counted for " +
                std::to_string(std::max<uint64_t>(1, arch.experts_per_token)) +
                " experts per token; router logits not counted");
  return ledger;
}

}  // namespace memplan
