// The vision tower and projector of a vision-language model in the training ledger. The tower's
// layers are counted by the transformer ledger itself (an encoder: LayerNorm, q/k/v/out with
// biases, no causal mask, the tower's MLP activation) over the tokens of one image, and their saved
// tensors were measured on one CLIP-style and one SigLIP-style layer (bench/accuracy/vit_saved.py,
// tests/unit/test_vision_activations.cpp). Module facts from transformers' modeling_clip.py,
// modeling_siglip.py, modeling_llava.py (LlavaMultiModalProjector) and modeling_gemma3.py
// (Gemma3MultiModalProjector).

#include "core/memory/vision_activations.hpp"

#include <algorithm>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"
#include "core/base/text.hpp"

namespace memplan {
namespace {

TransformerArch tower_arch(const VisionTower& t, uint64_t layers) {
  TransformerArch a;
  a.model_type = t.model_type;
  a.causal = false;
  a.layers = std::max<uint64_t>(layers, 1);
  a.hidden = t.hidden;
  a.heads = t.heads;
  a.kv_heads = t.heads;
  a.intermediate = t.intermediate;
  a.vocab = 0;
  a.activation = t.activation;
  a.norm = "layernorm";
  a.norm_first = true;
  a.final_norm = false;
  a.bias = true;
  a.position_embedding = "learned";
  return a;
}

uint64_t elements(uint64_t a, uint64_t b) { return checked_mul(a, b, "activation elements"); }

uint64_t bytes(uint64_t n, const ElementCost& c) { return bytes_for(n, c, "activation bytes"); }

void row(VisionActivations& v, bool record, const std::string& name, uint64_t tokens, uint64_t width,
         const std::string& format, uint64_t per_image) {
  if (!record) return;
  v.rows.push_back({"[vision] " + name, to_s(tokens) + " x " + to_s(width), format,
                    checked_mul(v.images, per_image, "activation bytes"), Role::saved});
}

// Saved tensors of one image, summed and (when recording) listed as rows.
struct SavedSum {
  VisionActivations& v;
  bool record;
  uint64_t sum = 0;
  void add(const std::string& name, uint64_t tokens, uint64_t width, const std::string& fmt,
           const ElementCost& c) {
    const uint64_t b = bytes(elements(tokens, width), c);
    sum = checked_add(sum, b, "activation bytes");
    row(v, record, name, tokens, width, fmt, b);
  }
};

// What the projector keeps for one image when its weights train. in_grad: its input requires grad
// (the tower trains).
uint64_t projector_bytes(VisionActivations& v, const VisionTower& t, bool in_grad,
                         const ActivationOptions& o) {
  const ElementCost act = o.act_cost;
  const ElementCost fp32{4, 1};
  const uint64_t n = t.projector_tokens;
  SavedSum saved{v, o.record};
  auto add = [&saved](const std::string& name, uint64_t tokens, uint64_t width, const std::string& fmt,
                      const ElementCost& c) { saved.add(name, tokens, width, fmt, c); };
  if (t.projector == "llava_mlp") {
    // LlavaMultiModalProjector: linear_1 (vision -> text width), GELU, linear_2. linear_1 keeps the
    // selected features, GELU its input, linear_2 GELU's output.
    add("projector linear_1 input (the selected image features)", n, t.hidden, o.act_format, act);
    add("projector GELU input", n, t.text_hidden, o.act_format, act);
    add("projector GELU output (linear_2 input)", n, t.text_hidden, o.act_format, act);
  } else {
    // Gemma3MultiModalProjector: the tower's tokens as a square, AvgPool2d down to
    // mm_tokens_per_image, Gemma3RMSNorm (fp32: x.float() * rsqrt(mean(x^2) + eps), times
    // 1 + weight), cast back, matmul by mm_input_projection_weight.
    if (in_grad) {
      add("projector avg-pool input (the tower's output as a square)", t.tokens, t.hidden, o.act_format, act);
      add("projector RMSNorm input upcast to fp32", n, t.hidden, "fp32", fp32);
      add("projector RMSNorm rsqrt", n, 1, "fp32", fp32);
    }
    add("projector RMSNorm normalised (fp32, the weight-multiply input)", n, t.hidden, "fp32", fp32);
    add("projector matmul input (RMSNorm output)", n, t.hidden, o.act_format, act);
  }
  return saved.sum;
}

// A frozen tower's largest working set, for one image: the layer input, its LayerNorm output and q,
// k, v, plus at the softmax the scores and the probabilities (eager) or the attention output
// (sdpa); or at the MLP the layer input, its LayerNorm output and the MLP's intermediates alive at
// once (quick_gelu: fc1 output, sigmoid and their product; gelu: fc1 output and GELU's output).
uint64_t transient(const VisionTower& t, const ActivationOptions& o, bool eager) {
  const uint64_t s = t.tokens, h = t.hidden;
  const uint64_t rows = elements(5, elements(s, h));
  const uint64_t attn = eager ? checked_add(rows, elements(2, elements(t.heads, elements(s, s))), "elements")
                              : checked_add(rows, elements(s, h), "elements");
  const uint64_t mlp =
      checked_add(elements(2, elements(s, h)),
                  elements(t.activation == "quick_gelu" ? 3 : 2, elements(s, t.intermediate)), "elements");
  return bytes(std::max(attn, mlp), o.act_cost);
}

// Qwen2-VL / Qwen2.5-VL's frozen tower, for one sample of P patches (all its images in one
// sequence), at its largest working set (transformers' VisionAttention / VisionSdpaAttention and
// VisionMlp / Qwen2_5_VLMLP). Attention: the block input, norm1's output, the qkv output (3 rows, of
// which v is a view) and the rotated q and k (7 rows of P x width), plus the mask over the whole
// sequence: eager builds it as a P x P tensor of the activation format (finfo.min outside each
// image's block, and in Qwen2.5-VL's window blocks outside each window: the same size) and at the
// softmax holds the masked scores (heads x P x P), their fp32 softmax and, unless the format is
// fp32, its cast back; sdpa builds a P x P bool mask, torch turns it into an additive mask of the
// format for the kernel, and the output is one more row. MLP: the block input, norm2's output and
// three P x intermediate tensors (quick_gelu: 1.702 x, its sigmoid, the product; gated: silu(gate),
// up, the product).
uint64_t merged_transient(const VisionTower& t, uint64_t patches, const ActivationOptions& o, bool eager,
                          std::string& how) {
  const uint64_t P = patches, h = t.hidden;
  const uint64_t row = elements(P, h), pp = elements(P, P);
  const uint64_t w = o.act_cost.num / std::max<uint64_t>(o.act_cost.den, 1);
  uint64_t attn = 0;
  if (eager) {
    const uint64_t per_score = w == 4 ? 8 : 2 * w + 4;  // masked scores + fp32 softmax (+ cast back)
    attn = checked_add(checked_add(bytes(elements(7, row), o.act_cost), bytes(pp, o.act_cost), "bytes"),
                       checked_mul(elements(t.heads, pp), per_score, "bytes"), "bytes");
    how = "eager attention: 7 rows of " + to_s(P) + " x " + to_s(h) + ", the " + to_s(P) + " x " + to_s(P) +
          " mask and " + to_s(t.heads) + " heads x " + to_s(P) + " x " + to_s(P) +
          " masked scores, their fp32 softmax" + (w == 4 ? "" : " and its cast back");
  } else {
    attn = checked_add(checked_add(bytes(elements(8, row), o.act_cost), bytes(pp, o.act_cost), "bytes"), pp,
                       "bytes");
    how = "sdpa: 8 rows of " + to_s(P) + " x " + to_s(h) + ", the " + to_s(P) + " x " + to_s(P) +
          " bool mask and its additive copy";
  }
  const uint64_t mlp =
      bytes(checked_add(elements(2, row), elements(3, elements(P, t.intermediate)), "elements"), o.act_cost);
  if (mlp > attn) {
    how = "the MLP: 2 rows of " + to_s(P) + " x " + to_s(h) + " and 3 of " + to_s(P) + " x " +
          to_s(t.intermediate);
    return mlp;
  }
  return attn;
}

// The PatchMerger's saved tensors for one image when it trains and the tower is frozen: ln_q
// (LayerNorm: its input, fp32 mean and rstd; RMSNorm: the normalised input cast back, the weight
// multiply's other operand), then mlp.0's input, GELU's input and mlp.2's input, each
// (tokens / merge^2) x (merge^2 x width) = tokens x width numbers.
uint64_t merger_bytes(VisionActivations& v, const VisionTower& t, const ActivationOptions& o) {
  const uint64_t n = t.tokens, h = t.hidden, g = t.merge * t.merge;
  SavedSum saved{v, o.record};
  auto add = [&saved](const std::string& name, uint64_t tokens, uint64_t width, const std::string& fmt,
                      const ElementCost& c) { saved.add(name, tokens, width, fmt, c); };
  if (t.norm == "layernorm") {
    add("merger ln_q input (the tower's output)", n, h, o.act_format, o.act_cost);
    add("merger ln_q mean and rstd", n, 2, "fp32", {4, 1});
  } else {
    add("merger ln_q RMSNorm normalised (the weight-multiply input)", n, h, o.act_format, o.act_cost);
  }
  add("merger mlp.0 input (ln_q output, " + to_s(g) + " patches a token)", t.projector_tokens, g * h,
      o.act_format, o.act_cost);
  add("merger GELU input", t.projector_tokens, g * h, o.act_format, o.act_cost);
  add("merger GELU output (mlp.2 input)", t.projector_tokens, g * h, o.act_format, o.act_cost);
  return saved.sum;
}

VisionActivations merged_tower(const VisionTower& t, uint64_t images, bool train_tower, bool train_projector,
                               const ActivationOptions& opts, bool eager) {
  if (train_tower)
    throw Error(Field::train_vision, "the " + t.model_type +
                                         " tower's saved tensors are not in the ledger yet (its frozen "
                                         "tower and trained merger are)");
  if (t.tokens == 0)
    throw Error(Field::image_size, "must be given: the tower's patches follow the image's size");
  VisionActivations v;
  v.trained = false;
  v.projector_trained = train_projector;
  v.images = images;
  v.patches_per_sample = checked_mul(images, t.tokens, "patches");
  std::string how;
  v.transient_bytes_per_sample = merged_transient(t, v.patches_per_sample, opts, eager, how);
  if (train_projector) v.projector_bytes_per_image = merger_bytes(v, t, opts);
  v.bytes_per_sample = checked_mul(images, v.projector_bytes_per_image, "activation bytes");
  if (!opts.record) return v;
  v.notes.push_back("vision tower (" + t.model_type + ") frozen: it keeps nothing for backward; the " +
                    to_s(images) + " image(s) of a sample are one sequence of " + to_s(images) + " x " +
                    to_s(t.tokens) + " = " + to_s(v.patches_per_sample) +
                    " patches, each block attending within each image through a block-diagonal mask over "
                    "all of them; while it runs its largest working set is " +
                    how + " = " + group_thousands(v.transient_bytes_per_sample) +
                    " B per sample, freed before the language model's forward saves anything");
  v.notes.push_back(train_projector
                        ? "merger (PatchMerger: ln_q, mlp.0, GELU, mlp.2) trains: it keeps its inputs"
                        : "merger (PatchMerger) frozen: it keeps nothing");
  return v;
}

// Llama 4's frozen tower (transformers' modeling_llama4.py: Llama4VisionEncoderLayer,
// Llama4VisionAttention, vision_apply_rotary_emb, Llama4VisionMLP) runs every tile of every image of
// a sample at once without saving anything. Its largest working set, per tile of s tokens x h:
// at the end of vision_apply_rotary_emb the layer input, input_layernorm's output, q_proj's, k_proj's
// and v_proj's outputs, q.float() and k.float() (fp32), their complex products with freqs_ci (fp32)
// and both cast back (type_as) are alive: 7 rows in the format and 4 in fp32; the attention after
// it (sdpa) holds less; the MLP holds the input, post_attention_layernorm's output, fc2's output and
// fc1's and GELU's s x intermediate outputs.
uint64_t llama4_tile_transient(const VisionTower& t, const ActivationOptions& o, std::string& how) {
  const uint64_t row = elements(t.tokens, t.hidden);
  const uint64_t rotary =
      checked_add(bytes(elements(7, row), o.act_cost), bytes(elements(4, row), {4, 1}), "activation bytes");
  const uint64_t mlp = bytes(
      checked_add(elements(3, row), elements(2, elements(t.tokens, t.intermediate)), "elements"), o.act_cost);
  if (mlp > rotary) {
    how = "the MLP: 3 rows of " + to_s(t.tokens) + " x " + to_s(t.hidden) + " and 2 of " + to_s(t.tokens) +
          " x " + to_s(t.intermediate);
    return mlp;
  }
  how = "the vision rotary embedding: 7 rows of " + to_s(t.tokens) + " x " + to_s(t.hidden) + " (" +
        o.act_format + ") and 4 in fp32 (q and k upcast, their complex products with freqs_ci)";
  return rotary;
}

// mllama's frozen tower (transformers' MllamaVisionModel.forward) runs an image's tiles, all
// max_num_tiles of them (the processor pads every image), as one sequence of T = tiles x positions
// rounded up to 8 (num_padding_patches), under a T x T additive mask in the model's format
// (prepare_aspect_ratio_attention_mask). The local encoder runs with output_hidden_states=True, so
// every layer's input and its output stay alive until the forward returns (layers + 1 rows of
// T x width); the k selected intermediate outputs are stacked, sliced and copied (k rows), the
// global encoder's output sliced and copied (1 row), and concatenated with them (k + 1 rows): at
// the concatenation layers + 2k + 3 rows and the mask are alive, more than at any layer.
uint64_t mllama_image_transient(const VisionTower& t, const ActivationOptions& o, std::string& how) {
  const uint64_t T = checked_mul(std::max<uint64_t>(t.tiles, 1), (t.tokens + 7) / 8 * 8, "tokens");
  const uint64_t k = t.hidden ? t.projector_width / t.hidden - 1 : 0;
  const uint64_t rows = t.layers + 2 * k + 3;
  how = to_s(rows) + " rows of " + to_s(T) + " x " + to_s(t.hidden) +
        " (every local layer's input and output, " + to_s(k) +
        " intermediate outputs copied, the final output and their concatenation) and the " + to_s(T) + " x " +
        to_s(T) + " mask";
  return checked_add(bytes(elements(rows, elements(T, t.hidden)), o.act_cost),
                     bytes(elements(T, T), o.act_cost), "activation bytes");
}

// A tiled tower the ledger counts frozen (Llama 4, mllama): it keeps nothing; its working set over
// an image's tiles is named; the projector keeps its input, projector_tokens x projector_width a
// tile, when it trains (Llama4MultiModalProjector.linear_1, mllama's multi_modal_projector).
VisionActivations tiled_tower(const VisionTower& t, uint64_t images, bool train_tower, bool train_projector,
                              const ActivationOptions& o) {
  if (train_tower)
    throw Error(Field::train_vision, "the " + t.model_type +
                                         " tower's saved tensors are not in the ledger yet (its frozen "
                                         "tower and trained projector are)");
  const bool llama4 = t.projector == "llama4";
  VisionActivations v;
  v.projector_trained = train_projector;
  v.images = images;
  const uint64_t tiles = std::max<uint64_t>(t.tiles, 1);
  std::string how;
  v.transient_bytes_per_image = llama4
                                    ? checked_mul(tiles, llama4_tile_transient(t, o, how), "activation bytes")
                                    : mllama_image_transient(t, o, how);
  const std::string projector = llama4 ? "Llama4MultiModalProjector" : "multi_modal_projector";
  if (train_projector) {
    SavedSum saved{v, o.record};
    saved.add("projector input (the " + std::string(llama4 ? "pixel-shuffle adapter's" : "tower's") +
                  " output, " + to_s(tiles) + " tile(s))",
              checked_mul(tiles, t.projector_tokens, "tokens"), t.projector_width, o.act_format, o.act_cost);
    v.projector_bytes_per_image = saved.sum;
  }
  v.bytes_per_sample = checked_mul(images, v.projector_bytes_per_image, "activation bytes");
  if (!o.record) return v;
  v.notes.push_back("vision tower (" + t.model_type +
                    ") frozen: it keeps nothing for backward; it runs the " + to_s(tiles) +
                    " tile(s) of each image at once, " + to_s(t.tokens) +
                    " tokens a tile (patches + the class token); its largest working set is " + how + " = " +
                    group_thousands(v.transient_bytes_per_image) +
                    " B an image, freed before the language model's forward saves anything");
  v.notes.push_back(train_projector
                        ? "projector (" + projector + ") trains: it keeps its input, " +
                              to_s(t.projector_tokens) + " tokens x " + to_s(t.projector_width) + " a tile"
                        : "projector (" + projector + ") frozen: it keeps nothing");
  return v;
}

}  // namespace

VisionActivations vision_activations(const VisionTower& t, uint64_t images, bool train_tower,
                                     bool train_projector, const ActivationOptions& opts) {
  if (t.merge) {
    const bool eager = opts.attention == Attention::eager || opts.runtime == Runtime::cpu_torch113;
    ActivationOptions o = opts;
    o.batch = 1;
    return merged_tower(t, images, train_tower, train_projector, o, eager);
  }
  if (t.projector == "llama4" || t.projector == "mllama") {
    ActivationOptions o = opts;
    o.batch = 1;
    return tiled_tower(t, images, train_tower, train_projector, o);
  }
  if (t.projector != "llava_mlp" && t.projector != "gemma3")
    throw Error("vision_config", "the projector \"" + t.projector + "\" is not in the activation ledger");
  VisionActivations v;
  v.trained = train_tower;
  v.projector_trained = train_projector || train_tower;
  v.images = images;
  ActivationOptions o = opts;
  o.batch = 1;
  o.seq = t.tokens;
  o.lora.reset();  // the tower has no adapters: it trains whole or not at all
  o.fp32_logits = false;
  o.keep_logits = false;
  o.bnb_4bit = false;
  o.bnb_layers = false;
  o.autocast_over_half = false;
  o.litgpt = false;
  o.dropout = false;  // CLIP's and SigLIP's attention_dropout is 0.0
  const bool eager = opts.attention == Attention::eager || opts.runtime == Runtime::cpu_torch113;
  if (train_tower) {
    const ActivationLedger l = transformer_activations(tower_arch(t, t.used_layers), o);
    v.layer_bytes_per_image = l.layer_bytes;
    uint64_t tower = checked_mul(t.used_layers, l.layer_bytes, "activation bytes");
    if (opts.record)
      for (const SavedTensor& s : l.per_layer)
        v.rows.push_back({"[vision layer, each of " + to_s(t.used_layers) + "] " + s.name +
                              (s.role == Role::recomputed ? " (recomputed)" : ""),
                          s.shape.substr(s.shape.find('x') + 2), s.format,
                          checked_mul(images, s.bytes, "activation bytes"), s.role});
    // CLIP's pre_layrnorm and SigLIP's post_layernorm (LayerNorm: input and fp32 mean and rstd).
    // Under autocast the residual stream stays fp32.
    const ElementCost res = opts.autocast ? ElementCost{4, 1} : opts.act_cost;
    const uint64_t ln_in = bytes(elements(t.tokens, t.hidden), res);
    const uint64_t ln_stats = bytes(elements(t.tokens, 2), {4, 1});
    const uint64_t ln = checked_add(ln_in, ln_stats, "activation bytes");
    const std::string which = t.model_type == "clip_vision_model" ? "pre_layrnorm" : "post_layernorm";
    row(v, opts.record, "tower " + which + " input", t.tokens, t.hidden,
        opts.autocast ? "fp32" : opts.act_format, ln_in);
    row(v, opts.record, "tower " + which + " mean and rstd", t.tokens, 2, "fp32", ln_stats);
    tower = checked_add(tower, ln, "activation bytes");
    v.tower_bytes_per_image = tower;
    if (opts.autocast) v.fixed_bytes = l.fixed_bytes;
  } else {
    v.transient_bytes_per_image = transient(t, o, eager);
  }
  if (v.projector_trained) v.projector_bytes_per_image = projector_bytes(v, t, train_tower, o);
  v.bytes_per_sample = checked_mul(
      images, checked_add(v.tower_bytes_per_image, v.projector_bytes_per_image, "activation bytes"),
      "activation bytes");
  if (!opts.record) return v;
  if (train_tower)
    v.notes.push_back("vision tower (" + t.model_type + ") trained: " + to_s(t.used_layers) + " of its " +
                      to_s(t.layers) +
                      " layers reach the loss, each keeping what an encoder layer keeps over " +
                      to_s(t.tokens) + " tokens x " + to_s(t.hidden) + " per image (" +
                      (eager ? "eager attention: heads x tokens x tokens probabilities" : "sdpa") +
                      ", no causal mask, " + t.activation + "); the pixel values are input, not activations");
  else
    v.notes.push_back("vision tower (" + t.model_type +
                      ") frozen: it keeps nothing for backward; while it runs, "
                      "its largest layer needs " +
                      group_thousands(v.transient_bytes_per_image) + " B of working memory per image (" +
                      to_s(t.tokens) + " tokens), freed before the language model's forward saves anything");
  v.notes.push_back(v.projector_trained ? "projector (" + t.projector + ") trains: it keeps its inputs"
                                        : "projector (" + t.projector + ") frozen: it keeps nothing");
  return v;
}

}  // namespace memplan
