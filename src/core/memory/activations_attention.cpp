// Activations of a transformer layer's attention (transformer_layer_model.hpp): what eager
// attention, sdpa and Lit-GPT's attention keep of q, k, v, and HF's q/k norms. The rules and their
// measurements are listed in activations_transformer.cpp.
//   eager attn  q, k, v as batched-matmul copies, softmax probabilities (heads x s x s), the
//               attention output; scores themselves are not kept (scaling keeps a scalar).
//               Soft-capped scores (Gemma 2) keep tanh's output. Hugging Face's eager attention
//               of the Llama template computes the softmax in fp32 and casts it back
//               (`softmax(w, dim=-1, dtype=torch.float32).to(query.dtype)`): in a half model
//               softmax keeps its fp32 output and the second matmul the half copy; which families
//               do, by transformers release, and OPT's torch.max before 4.49:
//               hf_release_rules.hpp. torch < 1.11's softmax also keeps its input
//               (torch_release.hpp).
//   sdpa        q, k, v, output, log-sum-exp (heads x s, fp32).

#include <string>

#include "core/base/checked.hpp"
#include "core/memory/activation_ledger.hpp"
#include "core/memory/hf_release_rules.hpp"
#include "core/memory/transformer_layer_model.hpp"

namespace memplan {
namespace detail {

// Whether eager attention's softmax keeps an fp32 output (and the PV matmul a half copy of it):
// CUDA autocast runs softmax in fp32, and the Llama template's eager attention asks for fp32 in a
// half model. The same in a full fine-tune and under LoRA (frozen weights change what needs a
// gradient, not the dtypes).
bool LayerModel::eager_softmax_fp32() const {
  const bool half = !(m_act.cost == detail::fp32_fmt().cost);
  const bool autocast_fp32 = m_opts.autocast && m_opts.runtime == Runtime::cuda;
  return autocast_fp32 ||
         (half && hf_eager_softmax_fp32(m_arch.model_type, m_opts.transformers, m_act.name == "fp16"));
}

void LayerModel::attention_core(Entries& e) const {
  const Shape& d = m_shape;
  const Role core = m_opts.checkpointing == Checkpointing::selective ? Role::recomputed : Role::saved;
  if (m_eager) {
    add_entry(e, "q (batched-matmul copy)", {d.s, d.qd}, m_act);
    add_entry(e, "k (batched-matmul copy, all heads)", {d.s, d.qd}, m_act);
    add_entry(e, "v (batched-matmul copy, all heads)", {d.s, d.qd}, m_act);
    if (m_arch.attn_softcap > 0.0)
      add_entry(e, "soft-capped scores (tanh output, kept by tanh)", {d.nh, d.s, d.s}, m_act, core);
    const bool autocast_fp32 = m_opts.autocast && m_opts.runtime == Runtime::cuda;
    const bool fp32_softmax = eager_softmax_fp32();
    if (m_opts.softmax_keeps_input) {
      // torch < 1.11 keeps softmax's input: the masked scores, or the fp32 copy softmax reads
      // (autocast's cast; softmax(dtype=float32) converts bf16 first and reads fp16 as it is).
      const bool fp32_input = autocast_fp32 || (fp32_softmax && m_act.name != "fp16");
      add_entry(e, "softmax input (masked scores, kept by torch < 1.11's softmax backward)", {d.nh, d.s, d.s},
                fp32_input ? detail::fp32_fmt() : m_act, core);
    }
    if (hf_eager_max_keeps_scores(m_arch.model_type, m_opts.transformers))
      // OPT before 4.49: torch.max(scores + mask, finfo.min) keeps its input; the mask is in the
      // embeddings' format (fp32 under autocast), so the sum is too.
      add_entry(e, "masked scores (kept by OPT's torch.max, transformers < 4.49)", {d.nh, d.s, d.s},
                m_opts.autocast ? detail::fp32_fmt() : m_act, core);
    if (fp32_softmax) {
      add_entry(e, "softmax probabilities", {d.nh, d.s, d.s}, detail::fp32_fmt(), core);
      add_entry(
          e, [&] { return "probabilities cast to " + m_act.name; }, {d.nh, d.s, d.s}, m_act, core);
    } else {
      add_entry(e, "softmax probabilities", {d.nh, d.s, d.s}, m_act, core);
    }
    if (m_drop_attn) {
      add_entry(e, "attention dropout mask", {d.nh, d.s, d.s}, mask(m_act), core);
      add_entry(e, "attention dropout output", {d.nh, d.s, d.s}, m_act, core);
    }
    add_entry(e, "attention output (output projection input)", {d.s, d.qd}, m_act);
    return;
  }
  if (m_opts.litgpt) {
    litgpt_qkv(e);
    add_entry(e, "attention output (output projection input)", {d.s, d.qd}, m_act);
    add_entry(e, "attention log-sum-exp", {d.nh, d.s}, detail::fp32_fmt());
    return;
  }
  sdpa_qkv(e);
  add_entry(e, "attention output (output projection input)", {d.s, d.qd}, m_act);
  add_entry(e, "attention log-sum-exp", {d.nh, d.s}, detail::fp32_fmt());
}

// What sdpa keeps of q, k and v (its inputs, as they are handed to it). GPT-2 (transformers 5.24.0
// models/gpt2/modeling_gpt2.py GPT2Attention) splits the fused c_attn output into views and rotates
// nothing, so q is a view of that output and sdpa keeps all of it; k and v are new tensors where
// the forward builds a DynamicCache (use_cache, the config's default, off under gradient
// checkpointing): DynamicLayer.update concatenates them onto the empty cache (torch.cat copies).
// Elsewhere rotary or the cache's cat makes q, k and v new tensors of their own widths.
void LayerModel::sdpa_qkv(Entries& e) const {
  const Shape& d = m_shape;
  const bool gpt2_views = m_arch.model_type == "gpt2" && m_arch.fused_qkv && !m_opts.litgpt &&
                          m_opts.runtime != Runtime::cpu_torch113 && !m_opts.transformers.before(5, 0);
  if (!gpt2_views) {
    add_entry(e, "q", {d.s, d.qd}, m_act);
    add_entry(e, "k", {d.s, d.kvd}, m_act);
    add_entry(e, "v", {d.s, d.kvd}, m_act);
    return;
  }
  add_entry(e, "c_attn output (q is a view of it: sdpa keeps all of it)",
            {d.s, checked_add(d.qd, checked_mul(2, d.kvd, "qkv width"), "qkv width")}, m_act);
  if (m_opts.checkpointing != Checkpointing::full) {
    add_entry(e, "k (the DynamicCache's cat copy)", {d.s, d.kvd}, m_act);
    add_entry(e, "v (the DynamicCache's cat copy)", {d.s, d.kvd}, m_act);
  }
}

// What sdpa keeps of q, k, v in Lit-GPT (lit_gpt/model.py CausalSelfAttention at 8641822): q and k
// are new tensors (rotary, then torch.cat with the unrotated part); with grouped kv heads k and v
// are expanded to every query head and reshaped into copies; without grouping v is a view of the
// fused qkv Linear's output, so the whole output stays alive with it.
void LayerModel::litgpt_qkv(Entries& e) const {
  const Shape& d = m_shape;
  const bool grouped = m_arch.resolved_kv_heads() != m_arch.heads;
  add_entry(e, "q (rotary + cat copy)", {d.s, d.qd}, m_act);
  add_entry(e, grouped ? "k (expanded to every head, rotary + cat copy)" : "k (rotary + cat copy)",
            {d.s, grouped ? d.qd : d.kvd}, m_act);
  if (grouped)
    add_entry(e, "v (expanded to every head and reshaped: a copy)", {d.s, d.qd}, m_act);
  else
    add_entry(e, "fused qkv output (v is a view of it: sdpa keeps all of it)",
              {d.s, checked_add(d.qd, checked_mul(2, d.kvd, "qkv width"), "qkv width")}, m_act);
}

// HF's q_norm / k_norm (Qwen3RMSNorm and kin) on the projections' output: x.float() kept by x^2
// and the multiply (the projection's own output when that is fp32 already), rsqrt per token and
// head ("head") or per token ("all"), and the normalised tensor cast back for the weight's
// gradient. Their output feeds rotary, whose multiplies by cos/sin keep only cos/sin.
// Measured on an H200 (Qwen3-1.7B, bench/accuracy/gpu_peak_contents.py): 4 fp32 upcasts per layer.
void LayerModel::qk_norms(Entries& e, bool q_grad, bool k_grad) const {
  if (m_arch.qk_norm.empty()) return;
  const Shape& d = m_shape;
  const bool per_head = m_arch.qk_norm == "head";
  const bool input_fp32 = m_act.cost == detail::fp32_fmt().cost;
  auto one = [&](const std::string& which, bool grad, uint64_t width, uint64_t heads) {
    if (grad) {
      add_entry(
          e, [&] { return which + (input_fp32 ? " norm input" : " norm input upcast to fp32"); },
          {d.s, width}, detail::fp32_fmt());
      if (m_opts.runtime == Runtime::cpu_torch113)
        add_entry(
            e, [&] { return which + " norm input squared (torch 1.13 mean keeps its input)"; }, {d.s, width},
            detail::fp32_fmt());
      add_entry(
          e, [&] { return which + " norm rsqrt"; }, {d.s, per_head ? heads : 1}, detail::fp32_fmt());
    }
    if (!m_opts.lora)  // kept for the norm weight's gradient only
      add_entry(
          e, [&] { return which + " norm normalised (weight-multiply input)"; }, {d.s, width}, m_act);
  };
  one("q", q_grad, d.qd, m_arch.heads);
  one("k", k_grad, d.kvd, m_arch.resolved_kv_heads());
}

}  // namespace detail
}  // namespace memplan
