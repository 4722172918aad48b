#pragma once
// Internal: the transformer activation model of one layer and what lies outside the layers,
// shared by activations_transformer.cpp (full fine-tuning) and activations_lora.cpp (frozen base
// weights with LoRA adapters).

#include <cstdint>
#include <string>
#include <vector>

#include "core/memory/activations.hpp"

#include "core/memory/activation_ledger.hpp"

namespace memplan::detail {

struct Shape {
  uint64_t s, h, nh, qd, kvd, ff, vocab;
};

class LayerModel {
 public:
  LayerModel(const TransformerArch& arch, const ActivationOptions& opts);

  const Shape& shape() const { return m_shape; }
  const Fmt& act() const { return m_act; }
  const Fmt& res() const { return m_res; }
  bool eager() const { return m_eager; }

  // The dropout mask for a tensor of format f.
  Fmt mask(const Fmt& f) const;

  // A norm reading the residual stream. input_grad: its input requires grad (false for the first
  // layer of a stack fed hidden states); count_input: the input storage is not already counted.
  void norm(Entries& e, const char* name, bool input_grad, bool count_input) const;
  bool norm_multiplies_fp32() const;  // Gemma's RMSNorm: the weight multiply in fp32
  bool sandwich_norms() const;        // Gemma 2/3: norms on the attention and MLP outputs too

  // What the Linear layers reading a residual-format tensor keep: one storage, or under
  // autocast one half copy per Linear call.
  void linear_inputs(Entries& e, const char* name, uint64_t calls) const;

  void litgpt_qkv(Entries& e) const;
  // Eager attention's softmax keeps an fp32 output and the PV matmul a half copy of it.
  bool eager_softmax_fp32() const;
  void attention_core(Entries& e) const;
  void sdpa_qkv(Entries& e) const;  // what sdpa keeps of q, k, v

  // q_norm / k_norm (arch.qk_norm) between the q/k projections and rotary: what each keeps when
  // its input needs a gradient (q_grad, k_grad), and for its weight's gradient when not frozen.
  void qk_norms(Entries& e, bool q_grad, bool k_grad) const;

  void mlp_core(Entries& e) const;

  // A mixture-of-experts layer's router and token dispatch (beside the experts' MLP tensors).
  // frozen: the experts' weights are frozen (LoRA).
  void moe_routing(Entries& e, bool frozen) const;

  // The format a mixture of experts' routed experts compute in: transformers' grouped_mm experts
  // (integrations/moe.py) are not autocast, so under autocast they run in the master weights'
  // format, fp32; otherwise the activation format.
  const Fmt& experts_fmt() const;
  bool experts_uncast() const;  // experts_fmt() is not the activation format

  // Linear calls reading the MLP's input (each keeps a half copy under autocast): gate and up, or
  // one; in a mixture of experts whose experts are not autocast, the router's and the shared
  // expert's only.
  uint64_t mlp_linear_calls() const;
  // The MLP's weights autocast copies (the same matrices: a mixture of experts' routed experts none).
  uint64_t mlp_weight_elements() const;

  // An MLP tensor of every token's intermediate width (d.ff) in format f. In a mixture of experts
  // whose routed experts compute in another format (experts_fmt), two entries: the routed
  // experts' part in that format and the shared experts' in f.
  // name: a callable returning the entry's name (called only when recording).
  template <class Name>
  void ff_entry(Entries& e, Name&& name, const Fmt& f) const {
    const Fmt& ex = experts_fmt();
    if (m_arch.experts == 0 || ex.name == f.name) {
      add_entry(e, name, {m_shape.s, m_shape.ff}, f);
      return;
    }
    const uint64_t shared = m_arch.shared_intermediate;
    add_entry(
        e, [&] { return name() + (shared ? " (routed experts)" : ""); }, {m_shape.s, m_shape.ff - shared},
        ex);
    if (shared > 0)
      add_entry(
          e, [&] { return name() + " (shared expert)"; }, {m_shape.s, shared}, f);
  }

  // What Hugging Face's gelu_new keeps besides its output.
  void gelu_new(Entries& e) const;

  // One layer. first: layer 0 (its input may be the model's input, which is not an activation).
  Entries layer(bool first) const;

  Entries outside() const;

  // An encoder's MLM or classification head and its loss (arch.encoder_head), after the last layer.
  void encoder_head(Entries& e) const;

  // What cross-entropy keeps of logits of `dims` (upcast: it reads an fp32 upcast of half logits):
  // its log-softmax, and under CUDA autocast on half logits nll_loss's fp32 copy of it too.
  void cross_entropy(Entries& e, const Dims& dims, bool upcast) const;
  // TRL's fused log-prob LM head (Loss::logprob): what its autograd function keeps.
  void logprob_head(Entries& e) const;
  // Positions in each of torchtune's 8 output chunks (the first ones, the largest).
  uint64_t torchtune_chunk() const;
  bool cuda_autocast_half_loss(bool upcast) const;

  // The format cross-entropy computes in (its log-softmax and the gradients it starts backward with).
  Fmt loss_format() const;
  // Positions cross-entropy reads: s, or s - 1 where the loss reads logits[..., :-1, :]
  // (transformers before 4.49, hf_release_rules.hpp).
  uint64_t loss_positions() const;
  // The format of the logits the forward returns (fp32 where the half ones are dropped once upcast).
  Fmt returned_logits_format() const;

  // The weights after the last layer autocast copies and keeps (LM head, encoder head).
  uint64_t head_weight_elements() const;

  // Weights autocast copies to half and keeps (those whose input requires grad).
  uint64_t autocast_weight_elements() const;

  // Extra compute of selective checkpointing: the attention matmuls (QK^T and PV, 4 s qd flops
  // per token) again, over a step of 3 forward passes' worth of flops.
  double selective_fraction() const;

  // --- LoRA: every base weight frozen, adapters on some matrices -------------------------------

  // Which tensors of a layer require a gradient when only the adapters train. Layer 0's input
  // does not (frozen embeddings, or hidden states fed in); every later layer's does.
  struct Grads {
    bool in = false;  // the layer's input
    bool q = false, k = false, v = false;
    bool attn = false;              // attention output (o's input)
    bool attn_out = false;          // o's output
    bool mlp_in = false;            // the MLP's input (its norm's input)
    bool gate = false, up = false;  // MLP projection outputs (not gated: up only)
    bool mlp_out = false;
  };

  Grads lora_grads(bool first) const;

  // The adapted q/k/v matrices: one where the model fuses them.
  std::vector<std::string> lora_qkv() const;

  std::vector<std::string> lora_mlp_in() const;

  // B(A(x)) keeps x (A's input, counted by the caller) and x.A, B's input (batch x seq x r).
  void litgpt_qkv_adapter(Entries& e) const;
  void lora_intermediate(Entries& e, const std::string& matrix) const;

  // The format the adapters compute in: fp32 adapters (peft's default) on a half model without
  // autocast cast their input to fp32; otherwise the activation format.
  Fmt lora_format() const;

  // Whether the adapters of a matrix keep a copy of its input of their own (dropout, or the cast
  // to fp32 adapters) rather than sharing the input's storage.
  bool lora_copies_input() const;

  // Whether adapters on `modules` reading an input of format `input` share its storage (so it is
  // counted once by lora_inputs).
  bool lora_shares_input(const std::vector<std::string>& modules, const Fmt& input) const;

  // bitsandbytes 4-bit frozen Linears (QLoRA) keep their input when it requires grad: the inputs
  // of a layer's frozen matmuls not already counted.
  void bnb_inputs(Entries& e, const Grads& g) const;

  // What the adapters on `modules` (matrices reading one input, `width` wide, of format `input`)
  // keep of it:
  // with dropout, per adapter its mask and the dropped copy; without, the cast copy per adapter
  // (fp32 adapters), one half copy per call under autocast, or else the shared input once.
  void lora_inputs(Entries& e, const std::string& name, const std::vector<std::string>& modules,
                   uint64_t width, const Fmt& input) const;

  void lora_attention_core(Entries& e, const Grads& g) const;

  void lora_mlp_core(Entries& e, const Grads& g) const;

  // One layer with frozen base weights: a frozen Linear keeps only its weight (for its input's
  // gradient); an adapted one's LoRA path keeps its input (one half copy per call under
  // autocast) and x.A.
  Entries lora_layer(bool first) const;

  // Half weight copies autocast keeps under LoRA in one layer: a frozen matrix's when its input
  // needs a gradient; an adapter's A likewise, its B always (x.A needs one).
  uint64_t lora_layer_weight_elements(bool first) const;
  uint64_t lora_adapter_elements() const;  // one layer's adapters, A and B
  template <typename F>
  void each_adapter(const Grads& g, F&& f) const;

  // All layers' and the frozen LM head's (its input, the final norm's output, needs a gradient).
  uint64_t lora_weight_elements() const;

 private:
  const TransformerArch& m_arch;
  const ActivationOptions& m_opts;
  Fmt m_act, m_res;
  // What the frozen MLP's gate and up matmuls produce: m_act, but the input's format (m_res) where
  // bitsandbytes' 4-bit layers run under autocast (Linear4bit.forward returns `.to(inp_dtype)`).
  Fmt m_mlp;
  Shape m_shape{};
  bool m_eager = true, m_drop_hidden = false, m_drop_attn = false;
};

}  // namespace memplan::detail
