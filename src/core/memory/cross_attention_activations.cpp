// mllama's cross-attention decoder layers, per sample, as transformers (v4.56 and later:
// modeling_mllama.py MllamaCrossAttentionDecoderLayer, MllamaTextCrossAttention,
// MllamaTextRMSNorm, MllamaTextMLP; integrations/sdpa_attention.py) and torch 2.x run them in a
// full fine-tune on a GPU. A layer, over s text tokens and N image features:
//   input_layernorm (RMSNorm: x upcast to fp32, rsqrt, x * rsqrt cast back for the weight), whose
//   output q_proj keeps; q_norm (RMSNorm over head_dim: q upcast, rsqrt per head and token, the
//   normalised q cast back), its output q goes to sdpa; k_proj and v_proj read the projector's
//   output (one tensor for every cross-attention layer); k_norm as q_norm over N x kv width; with a
//   mask, transformers' sdpa_attention_forward repeats k and v to every query head (repeat_kv: a
//   copy each; use_gqa_in_sdpa needs attention_mask None) and torch's memory-efficient kernel keeps
//   q, the repeated k and v, its output and its fp32 log-sum-exp (heads x s rounded up to 32,
//   kAlignLSE) and the mask, which it first pads to a multiple of 16 keys when N is not one
//   (a copy per call); o_proj keeps the output; cross_attn_attn_gate.tanh() * o_proj's output keeps
//   that output (the gate trains); post_attention_layernorm as input_layernorm; the gated MLP keeps
//   gate's output, silu's, up's and their product; full_text_row_masked_out_mask * the MLP output
//   keeps the (tiny) mask; cross_attn_mlp_gate.tanh() * that product keeps it.
// Full checkpointing keeps the layer's input, and backward rebuilds one layer at a time.
// LoRA (peft, adapters in fp32 on a half model, lora_dropout 0): every base weight and both gates
// are frozen, so no Linear keeps its input for its weight, no RMSNorm its normalised input, no gate
// multiply the tensor it scales; each adapter keeps its input cast to fp32 and x.A (rank wide, fp32),
// as in the self-attention layers (activations_lora.cpp). k and v need a gradient only when k_proj
// or v_proj is adapted (the image features need none: the projector is frozen), so k_norm keeps
// nothing otherwise; sdpa still keeps the repeated k and v for q's gradient.

#include "core/memory/cross_attention_activations.hpp"

#include <algorithm>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"
#include "core/base/text.hpp"

namespace memplan {
namespace {

uint64_t round_up(uint64_t n, uint64_t m) { return (n + m - 1) / m * m; }

struct Rows {
  CrossAttentionActivations& c;
  bool record;
  uint64_t sum = 0;
  void add(const std::string& name, uint64_t a, uint64_t b, const std::string& fmt, const ElementCost& cost) {
    const uint64_t n = bytes_for(checked_mul(a, b, "activation elements"), cost, "activation bytes");
    sum = checked_add(sum, n, "activation bytes");
    if (record) c.rows.push_back({name, to_s(a) + " x " + to_s(b), fmt, n, Role::saved});
  }
};

}  // namespace

CrossAttentionActivations cross_attention_activations(const TransformerArch& a, uint64_t image_tokens,
                                                      const ActivationOptions& o, uint64_t self_layer_bytes) {
  if (o.autocast)
    throw Error(Field::precision,
                "mllama's cross-attention layers are counted for pure bf16, fp16 or fp32 "
                "training with images, not autocast yet");
  if (o.attention == Attention::eager)
    throw Error(Field::attention,
                "mllama's cross-attention layers are counted with sdpa when training with "
                "images, not eager attention yet");
  if (o.lora && (o.lora->dropout > 0 || !o.lora->fp32_adapters || o.act_cost == ElementCost{4, 1}))
    throw Error(
        o.lora->dropout > 0 ? Field::lora_dropout : Field::lora,
        "mllama's cross-attention layers are counted under LoRA for peft's defaults on a half-precision "
        "model (fp32 adapters, lora_dropout 0)");
  if (o.checkpointing == Checkpointing::selective)
    throw Error(Field::checkpointing,
                "mllama's cross-attention layers are counted with none or full "
                "checkpointing when training with images");
  if (o.runtime != Runtime::cuda)
    throw Error(Field::device,
                "mllama's cross-attention layers are counted on a GPU (cuda) when training "
                "with images");
  CrossAttentionActivations c;
  c.layers = a.cross_attention_layers;
  c.image_tokens = image_tokens;
  const uint64_t s = o.seq, N = image_tokens, h = a.hidden, ff = a.intermediate;
  const uint64_t hd = a.resolved_head_dim(), heads = a.heads, kv = a.resolved_kv_heads();
  const uint64_t qd = checked_mul(heads, hd, "width"), kvd = checked_mul(kv, hd, "width");
  const ElementCost act = o.act_cost, fp32{4, 1};
  const std::string& f = o.act_format;
  const bool is_fp32 = act == fp32;
  const bool padded = N % 16 != 0;
  const std::string L =
      "[cross-attention layer, each of " + to_s(c.layers) +
      "] ";  // One layer as it runs forward (what a rebuilt layer holds under checkpointing too).
  const bool lora = o.lora.has_value();
  const LoraTargets t = lora ? *o.lora : LoraTargets{};
  Rows layer{c, o.record && o.checkpointing == Checkpointing::none};
  auto norm = [&](const std::string& name, uint64_t tokens, uint64_t width, uint64_t groups) {
    layer.add(L + name + (is_fp32 ? " input" : " input upcast to fp32"), tokens, width, "fp32", fp32);
    layer.add(L + name + " rsqrt", tokens, groups, "fp32", fp32);
    if (!lora) layer.add(L + name + " normalised (weight-multiply input)", tokens, width, f, act);
  };
  auto adapter = [&](bool on, const std::string& matrix, uint64_t tokens, uint64_t width) {
    if (!on) return;
    layer.add(L + matrix + " LoRA input cast to fp32 (A input)", tokens, width, "fp32", fp32);
    layer.add(L + matrix + " LoRA x.A (B input, rank " + to_s(t.rank) + ")", tokens, t.rank, "fp32", fp32);
  };
  norm("attention norm", s, h, 1);
  if (!lora) layer.add(L + "attention norm output (q projection input)", s, h, f, act);
  adapter(t.q, "q", s, h);
  norm("q_norm", s, qd, heads);
  layer.add(L + "q (q_norm output, sdpa input)", s, qd, f, act);
  adapter(t.k, "k (reading the image features)", N, h);
  adapter(t.v, "v (reading the image features)", N, h);
  if (!lora || t.k) norm("k_norm", N, kvd, kv);
  layer.add(L + (kv < heads ? "k repeated to every head (repeat_kv copy, sdpa input)" : "k (sdpa input)"), N,
            kv < heads ? qd : kvd, f, act);
  layer.add(L + (kv < heads ? "v repeated to every head (repeat_kv copy, sdpa input)" : "v (sdpa input)"), N,
            kv < heads ? qd : kvd, f, act);
  if (padded)
    layer.add(L + "cross-attention mask padded to " + to_s(round_up(N, 16)) + " keys (sdpa keeps it)", s,
              round_up(N, 16), f, act);
  layer.add(L + "attention output" + (lora ? "" : " (output projection input)"), s, qd, f, act);
  layer.add(L + "attention log-sum-exp (rows rounded up to 32)", heads, round_up(s, 32), "fp32", fp32);
  adapter(t.o, "o", s, qd);
  if (!lora)
    layer.add(L + "output projection output (kept by the tanh attention gate's multiply)", s, h, f, act);
  norm("MLP norm", s, h, 1);
  if (!lora) layer.add(L + "MLP norm output (MLP input)", s, h, f, act);
  adapter(t.gate, "gate", s, h);
  adapter(t.up, "up", s, h);
  layer.add(L + "gate projection output", s, ff, f, act);
  layer.add(L + a.activation + "(gate)", s, ff, f, act);
  layer.add(L + "up projection output", s, ff, f, act);
  if (!lora) layer.add(L + a.activation + "(gate) x up (down projection input)", s, ff, f, act);
  adapter(t.down, "down", s, ff);
  if (!lora)
    layer.add(L + "MLP output x full_text_row_masked_out_mask (kept by the tanh MLP gate's multiply)", s, h,
              f, act);
  const uint64_t full_layer = layer.sum;

  // What every cross-attention layer reads: the projector's output, and the text-row mask; the
  // cross-attention mask itself where no padded copy replaces it.
  Rows shared{c, o.record};
  const std::string S = "[cross-attention layers] ";
  if (!lora || o.checkpointing == Checkpointing::full)
    shared.add(S + "image features (the projector's output: every layer's k and v projection input" +
                   (lora ? ", a checkpoint input)" : ")"),
               N, h, f, act);
  shared.add(S + "full_text_row_masked_out_mask (kept by each layer's masked multiply)", s, 1, f, act);
  if (!padded || o.checkpointing == Checkpointing::full)
    shared.add(S + "cross-attention mask (" + (padded ? "checkpoint inputs" : "sdpa keeps it") + ")", s, N, f,
               act);

  if (o.checkpointing == Checkpointing::full) {
    Rows kept{c, o.record};
    kept.add(L + "layer input (checkpoint)", s, h, f, act);
    c.layer_bytes = kept.sum;
    c.rebuild_bytes = full_layer > self_layer_bytes ? full_layer - self_layer_bytes : 0;
    if (c.rebuild_bytes && o.record)
      c.rows.push_back(
          {S + "a rebuilt cross-attention layer beyond a rebuilt self-attention layer (backward)", "1", f,
           c.rebuild_bytes, Role::saved});
  } else {
    c.layer_bytes = full_layer;
  }
  c.shared_bytes = shared.sum;
  c.bytes_per_sample = checked_add(checked_add(checked_mul(c.layers, c.layer_bytes, "activation bytes"),
                                               c.shared_bytes, "activation bytes"),
                                   c.rebuild_bytes, "activation bytes");
  if (o.record) {
    c.notes.push_back("mllama: the " + to_s(c.layers) +
                      " cross-attention layers (cross_attention_layers) attend " + "from the " + to_s(s) +
                      " text tokens to " + group_thousands(N) + " image features; each keeps " +
                      group_thousands(c.layer_bytes) + " B per sample" +
                      (o.checkpointing == Checkpointing::full
                           ? " (its input: full checkpointing; one rebuilt in backward holds " +
                                 group_thousands(full_layer) + " B)"
                           : std::string()) +
                      ", and they share " + group_thousands(c.shared_bytes) + " B of inputs");
    if (padded)
      c.notes.push_back("mllama: " + group_thousands(N) +
                        " image features are not a multiple of 16: torch's memory-efficient sdpa pads the "
                        "cross-attention mask to " +
                        group_thousands(round_up(N, 16)) + " keys, a copy kept by each layer");
  }
  return c;
}

}  // namespace memplan
