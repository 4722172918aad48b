// Activations after a decoder's last layer: the final norm, the LM head's input and logits, and
// what the loss keeps (plain, chunked, fused; fp32 upcasts; torch < 1.11's log-softmax; Hugging
// Face's shifted labels). An encoder's head is in activations_encoder_head.cpp.

#include "core/memory/activation_ledger.hpp"
#include "core/memory/transformer_layer_model.hpp"

namespace memplan {
namespace detail {

Entries LayerModel::outside() const {
  Entries e;
  e.record = m_opts.record;
  const Shape& d = m_shape;
  const bool lora = m_opts.lora.has_value();
  // Frozen embeddings: nothing before layer 0 needs a gradient, except under reentrant full
  // checkpointing, where transformers' gradient_checkpointing_enable (and peft's recipes) call
  // enable_input_require_grads() so the checkpointed layers' input requires grad: a post-LN
  // encoder's embedding LayerNorm then keeps its input and statistics (measured, BERT/RoBERTa).
  const bool embeddings_grad = !lora || (m_opts.checkpointing == Checkpointing::full && !m_opts.litgpt);
  // GPT-2 (transformers 5.24.0) hands its eager attention's 4D float mask (batch x 1 x s x s, in
  // the embeddings' format) to each block as a positional argument, so the reentrant checkpoint
  // saves it with the block's input (one storage for every layer) until backward.
  if (m_eager && m_opts.checkpointing == Checkpointing::full && m_arch.model_type == "gpt2" &&
      !m_opts.litgpt && m_opts.runtime != Runtime::cpu_torch113 && !m_opts.transformers.before(5, 0))
    add_entry(e, "eager attention's 4D mask (kept by the reentrant checkpoint)", {1, d.s, d.s}, m_res);
  if (d.vocab > 0 && !m_arch.norm_first) norm(e, "embedding norm", embeddings_grad, true);
  if (d.vocab > 0 && m_drop_hidden && embeddings_grad)
    add_entry(e, "embedding dropout mask", {d.s, d.h}, mask(m_res));
  if (m_arch.final_norm) norm(e, "final norm", true, true);
  if (!m_arch.causal && d.vocab > 0 && !m_arch.encoder_head.empty()) {
    encoder_head(e);
    return e;
  }
  if (!(m_arch.causal && d.vocab > 0)) return e;
  if (m_opts.loss == Loss::logprob) {
    logprob_head(e);
    return e;
  }
  if (lora && m_opts.litgpt && m_opts.bnb_4bit)
    add_entry(e, "final norm output (kept by bitsandbytes' 4-bit LM head)", {d.s, d.h}, m_res);
  else if (lora)
    ;  // a frozen LM head keeps no input
  else if (m_opts.autocast)
    add_entry(
        e, [&] { return "final norm output cast to " + m_act.name + " (LM head input)"; }, {d.s, d.h}, m_act);
  else
    add_entry(e, "final norm output (LM head input)", {d.s, d.h}, m_res);
  if (m_opts.loss == Loss::fused) {
    add_entry(e, "LM head input's gradient (fused linear cross-entropy computes it in forward)", {d.s, d.h},
              m_act);
    return e;
  }
  if (m_opts.loss == Loss::chunked && m_opts.litgpt) {
    // Lit-GPT 8641822: model(x, lm_head_chunk_size=128) returns every chunk; Fabric's bf16-true
    // converts the output to the default dtype (fp32) and chunked_cross_entropy keeps each chunk's
    // fp32 log-softmax. The training loop holds the logits through backward.
    add_entry(e, "logits, every chunk, converted to fp32 by Fabric (held by the training loop)",
              {d.s, d.vocab}, detail::fp32_fmt());
    add_entry(e, "log-softmax of each chunk (fp32, kept by cross-entropy)", {d.s, d.vocab},
              detail::fp32_fmt());
    return e;
  }
  if (m_opts.loss == Loss::chunked && m_opts.torchtune) {
    // torchtune 0.6.1 CEWithChunkedOutputLoss: the output projection in 8 chunks (the recipe deletes
    // them after the loss), each cast .float() for F.cross_entropy, which keeps its fp32 log-softmax
    // (the fp32 copy goes once read); nll_loss keeps each chunk's labels, reshaped from the recipe's
    // shifted labels (a copy each).
    add_entry(e, "logits in 8 chunks (held for the loss, deleted before backward)", {d.s, d.vocab}, m_act,
              Role::held);
    add_entry(e, "one chunk's fp32 copy (log-softmax's input, freed once read)", {torchtune_chunk(), d.vocab},
              detail::fp32_fmt(), Role::held);
    add_entry(e, "log-softmax of each chunk (fp32, kept by cross-entropy)", {d.s, d.vocab},
              detail::fp32_fmt());
    add_entry(e, "shifted labels by chunks (int64, kept by cross-entropy)", {d.s}, Fmt{"int64", {8, 1}});
    return e;
  }
  if (m_opts.loss == Loss::chunked) {
    add_entry(e, "logits (LM head output by chunks, held by the training loop through backward)",
              {d.s, d.vocab}, m_act);
    add_entry(
        e, [&] { return "log-softmax of each chunk (kept by cross-entropy, " + m_act.name + ")"; },
        {d.s, d.vocab}, m_act);
    return e;
  }
  if (m_arch.final_softcap > 0.0)  // Gemma 2: logits = cap x tanh(lm_head(x) / cap)
    add_entry(e, "soft-capped logits (tanh output, kept by tanh)", {d.s, d.vocab}, m_act);
  // torch < 1.11's log-softmax keeps its input (torch_release.hpp): the tensor the loss reads is
  // saved until log-softmax's backward, not freed before backward. Before 4.49 that tensor is the
  // copy of the first s - 1 positions (hf_release_rules.hpp), after the upcast where there is one.
  const bool upcast = m_opts.fp32_logits && !(m_act.cost == detail::fp32_fmt().cost);
  const bool input_kept = m_opts.softmax_keeps_input;
  const bool shifted = m_opts.loss_shifted_copy;
  const bool dropped = upcast && m_opts.logits_half_dropped;  // 4.31-4.45: the forward returns the upcast
  if (m_opts.keep_logits)
    add_entry(e, "logits (LM head output, kept by the training loop through backward)", {d.s, d.vocab},
              returned_logits_format());
  else if (input_kept && !upcast && !shifted)
    add_entry(e, "logits (LM head output, kept by torch < 1.11's log-softmax backward)", {d.s, d.vocab},
              m_act);
  else if (!dropped)
    add_entry(e, "logits (LM head output, held for the loss)", {d.s, d.vocab}, m_act, Role::held);
  if (upcast && input_kept && !shifted)
    add_entry(e, "logits upcast to fp32 (kept by torch < 1.11's log-softmax backward)", {d.s, d.vocab},
              detail::fp32_fmt());
  else if (upcast && !(dropped && m_opts.keep_logits))
    add_entry(e,
              dropped ? "logits upcast to fp32 by the forward's logits.float() (held)"
                      : "logits upcast to fp32 (held)",
              {d.s, d.vocab}, detail::fp32_fmt(), Role::held);
  const uint64_t n = loss_positions();
  if (shifted) {
    // The copy is in the logits' format (fp32 once upcast); under autocast without an upcast
    // log_softmax reads an fp32 cast of it, and torch < 1.11 keeps whichever it reads.
    const Fmt copy_fmt = upcast ? detail::fp32_fmt() : m_act;
    const bool cast = !(copy_fmt.cost == loss_format().cost) && !cuda_autocast_half_loss(upcast);
    if (input_kept && !cast)
      add_entry(e, "logits[..., :-1, :] copy (kept by torch < 1.11's log-softmax backward)", {n, d.vocab},
                copy_fmt);
    else
      add_entry(e, "logits[..., :-1, :] copy the loss reads (held)", {n, d.vocab}, copy_fmt, Role::held);
    if (cast && input_kept)
      add_entry(e, "the copy cast to fp32 by autocast (kept by torch < 1.11's log-softmax backward)",
                {n, d.vocab}, loss_format());
    else if (cast)
      add_entry(e, "the copy cast to fp32 by autocast for log-softmax (held)", {n, d.vocab}, loss_format(),
                Role::held);
  }
  cross_entropy(e, {n, d.vocab}, upcast);
  // Hugging Face's own loss (transformers 5.24.0 loss/loss_utils.py ForCausalLMLoss) pads the labels
  // and shifts them, `labels[..., 1:].contiguous()`: a new int64 tensor that cross-entropy keeps;
  // before 4.49 the labels are shifted without the pad (s - 1 of them).
  if ((m_opts.fp32_logits || shifted) && m_opts.runtime != Runtime::cpu_torch113)
    add_entry(e, "shifted labels (int64, kept by cross-entropy)", {n}, Fmt{"int64", {8, 1}});
  return e;
}

// TRL's fused LM head (trl 1.16.0 trainer/utils.py add_fused_lm_head, kernels/chunked_logprob.py):
// last_hidden_state[:, :-1] goes to ChunkedLogProbFunction as (tokens, hidden), a copy (the slice
// is not contiguous; on CUDA the rows whose label is not -100, hidden[mask]), which it saves with
// the targets (labels[mask], int64), log_z and the entropy (fp32 per token); masked_scatter keeps
// the mask. No logits exist beyond one tile (timeline.hpp's loss transient).
void LayerModel::logprob_head(Entries& e) const {
  const Shape& d = m_shape;
  const uint64_t n = d.s > 1 ? d.s - 1 : d.s;
  add_entry(e, "final norm output[:, :-1] copy (kept by TRL's fused log-prob LM head)", {n, d.h}, m_res);
  add_entry(e, "log_z and entropy per token (fp32, kept by TRL's fused LM head)", {2, n}, detail::fp32_fmt());
  add_entry(e, "targets (int64, kept by TRL's fused LM head)", {n}, Fmt{"int64", {8, 1}});
  add_entry(e, "label mask (bool, kept by masked_scatter)", {n}, Fmt{"bool", {1, 1}});
}

// torchtune's chunk: tensor_split into 8 along the sequence, the first ceil(s / 8) positions.
uint64_t LayerModel::torchtune_chunk() const {
  return (m_shape.s + k_torchtune_output_chunks - 1) / k_torchtune_output_chunks;
}

// F.cross_entropy is log_softmax(x, dim, x.dtype) then nll_loss (torch
// aten/src/ATen/native/LossNLL.cpp cross_entropy_loss: the dtype is passed, so autocast's
// fp32_set_opt_dtype policy leaves it): log_softmax keeps its output in x's format. CUDA
// autocast's fp32 list holds nll_loss (ATen/autocast_mode.h AT_FORALL_FP32), so on half logits it
// reads, and keeps, an fp32 copy of the log-softmax. CPU autocast (torch 1.13's list) casts
// cross_entropy_loss's input to fp32 whole instead: the one fp32 log-softmax of loss_format().
bool LayerModel::cuda_autocast_half_loss(bool upcast) const {
  return m_opts.autocast && m_opts.runtime == Runtime::cuda && !upcast &&
         !(m_act.cost == detail::fp32_fmt().cost);
}

void LayerModel::cross_entropy(Entries& e, const Dims& dims, bool upcast) const {
  if (!cuda_autocast_half_loss(upcast)) {
    add_entry(e, "log-softmax of logits (kept by cross-entropy)", dims, loss_format());
    return;
  }
  add_entry(
      e, [&] { return "log-softmax of logits (" + m_act.name + ", kept by log_softmax)"; }, dims, m_act);
  add_entry(e, "log-softmax cast to fp32 by autocast (kept by nll_loss)", dims, detail::fp32_fmt());
}

// The format cross-entropy computes in: fp32 when the logits are fp32, upcast, or under autocast.
Fmt LayerModel::loss_format() const {
  const bool act_fp32 = m_act.cost == detail::fp32_fmt().cost;
  return (act_fp32 || m_opts.autocast || m_opts.fp32_logits) ? detail::fp32_fmt() : m_act;
}

}  // namespace detail
}  // namespace memplan

namespace memplan {
namespace detail {

uint64_t LayerModel::loss_positions() const {
  return m_opts.loss_shifted_copy && m_shape.s > 1 ? m_shape.s - 1 : m_shape.s;
}

Fmt LayerModel::returned_logits_format() const {
  const bool upcast = m_opts.fp32_logits && !(m_act.cost == detail::fp32_fmt().cost);
  return upcast && m_opts.logits_half_dropped ? detail::fp32_fmt() : m_act;
}

}  // namespace detail
}  // namespace memplan
