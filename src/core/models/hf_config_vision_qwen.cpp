// Qwen2-VL and Qwen2.5-VL (Qwen2VLForConditionalGeneration, Qwen2_5_VLForConditionalGeneration):
// a Qwen2 language model, a vision transformer over 14 x 14 x 2 (temporal) patches, and the patch
// merger that folds 2 x 2 neighbouring patches into one language-model token. Module facts from
// transformers' modeling_qwen2_vl.py and modeling_qwen2_5_vl.py; the two towers differ in their
// norms (LayerNorm vs RMSNorm), their MLP (fc1/fc2 vs gated gate/up/down, all with biases) and the
// merger's ln_q (a LayerNorm with a bias in Qwen2-VL, an RMSNorm without one in Qwen2.5-VL: the
// 1,280 parameters of ln_q.bias are the difference between the two mergers).
#include <cmath>
#include <string>

#include <memplan/quantity.hpp>
#include "core/base/text.hpp"
#include "core/models/hf_config_vision.hpp"

namespace memplan::detail {

namespace {

// `key` of the vision config, or `fallback` with a note naming the default used.
uint64_t vision_or(ConfigReader& v, std::initializer_list<const char*> keys, uint64_t fallback,
                   const char* owner, std::vector<std::string>& notes) {
  if (auto x = v.count(keys)) return *x;
  notes.push_back(std::string("vision_config has no ") + *keys.begin() + ": " + owner + "'s default " +
                  to_s(fallback) + " used");
  return fallback;
}

}  // namespace

FamilyCount count_qwen2_vl(ConfigReader& c, const std::string& mt) {
  const bool v25 = mt == "qwen2_5_vl";
  const char* owner = v25 ? "Qwen2_5_VLVisionConfig" : "Qwen2VLVisionConfig";

  // The language model: text_config when the config has one (transformers >= 4.53 writes it),
  // else the top-level fields (the configs Qwen published).
  nlohmann::json text = c.json();
  std::string text_from = "top-level fields";
  if (auto it = c.json().find("text_config"); it != c.json().end() && !it->is_null()) {
    if (!it->is_object()) c.fail("text_config", "is not an object");
    text = *it;
    text_from = "text_config";
    if (!text.contains("tie_word_embeddings") && c.has("tie_word_embeddings"))
      text["tie_word_embeddings"] = c.json()["tie_word_embeddings"];
  }
  ConfigReader tr(text, text_from == "text_config" ? c.file() + ": text_config" : c.file());
  FamilyCount r = count_gated_decoder(tr, "qwen2");  // q, k, v biases as Qwen2
  read_attention_kinds(tr, "qwen2", r);              // use_sliding_window, max_window_layers
  r.attention_read = true;
  const Count language = r.total;
  const uint64_t th = r.arch.hidden;

  auto vit = c.json().find("vision_config");
  if (vit == c.json().end() || !vit->is_object())
    c.fail("vision_config", "is missing (a " + mt + " config describes its vision tower there)");
  const nlohmann::json& vj = *vit;
  ConfigReader v(vj, c.file() + ": vision_config");
  std::vector<std::string> notes;

  const uint64_t depth = v.need({"depth"});
  const uint64_t d = v25 ? v.need({"hidden_size"}) : v.need({"embed_dim"});
  const uint64_t heads = v.need({"num_heads"});
  if (heads == 0 || d % heads != 0)
    v.fail("num_heads", to_s(heads) + " does not divide the tower's width " + to_s(d));
  const uint64_t C = vision_or(v, {"in_chans", "in_channels"}, 3, owner, notes);
  const uint64_t p = vision_or(v, {"patch_size", "spatial_patch_size"}, 14, owner, notes);
  const uint64_t tp = vision_or(v, {"temporal_patch_size"}, 2, owner, notes);
  const uint64_t m = vision_or(v, {"spatial_merge_size"}, 2, owner, notes);
  // The merger's output width: out_hidden_size (Qwen2.5-VL) or hidden_size (Qwen2-VL), the
  // language model's width.
  const uint64_t out = v25 ? v.need({"out_hidden_size"}) : v.need({"hidden_size"});
  if (out != th)
    v.fail(v25 ? "out_hidden_size" : "hidden_size",
           to_s(out) + " is not the language model's hidden_size " + to_s(th) +
               " (the merger's output is the language model's input)");

  // The MLP's width: intermediate_size (Qwen2.5-VL) or embed_dim x mlp_ratio (Qwen2-VL).
  uint64_t I = 0;
  std::string mlp_field;
  if (v25) {
    I = v.need({"intermediate_size"});
    mlp_field = "intermediate_size";
  } else {
    const double ratio = v.real({"mlp_ratio"}).value_or(4.0);
    if (!v.has("mlp_ratio"))
      notes.push_back(std::string("vision_config has no mlp_ratio: ") + owner + "'s 4");
    if (!(ratio > 0) || ratio > 64) v.fail("mlp_ratio", "is not a ratio between 0 and 64");
    I = static_cast<uint64_t>(static_cast<double>(d) * ratio);  // int(embed_dim * mlp_ratio)
    mlp_field = "embed_dim x mlp_ratio";
  }

  // patch_embed: a Conv3d without bias over C x tp x p x p.
  const Count patch_embed = Count(C) * tp * p * p * d;
  // One block: two norms (LayerNorm weight + bias; RMSNorm weight), qkv (d -> 3d) and proj with
  // biases, the MLP with biases (fc1, fc2; or gate, up, down).
  const Count norms = Count(v25 ? 2 : 4) * d;
  const Count attention = Count(d) * 3 * d + Count(3) * d + Count(d) * d + d;
  const Count mlp =
      v25 ? Count(2) * (Count(d) * I + I) + Count(I) * d + d : Count(d) * I + I + Count(I) * d + d;
  const Count block = norms + attention + mlp;
  // The merger: ln_q over d, then (m^2 d -> m^2 d) and (m^2 d -> out), both with biases.
  const Count merged = Count(m) * m * d;
  const Count ln_q = v25 ? Count(d) : Count(2) * d;
  const Count merger = ln_q + merged * merged + merged + merged * out + out;
  const Count tower = patch_embed + Count(depth) * block;

  r.total = language + tower + merger;
  r.tensors = r.tensors + 1 + Count(depth) * 12 + (v25 ? 5 : 6);
  r.notes.insert(r.notes.end(), notes.begin(), notes.end());
  r.notes.push_back(mt + ": language model (qwen2, " + text_from + ") " + group_thousands(language.v) +
                    " parameters; vision tower (vision_config: depth " + to_s(depth) + ", width " + to_s(d) +
                    ", MLP " + to_s(I) + ") " + group_thousands(tower.v) + "; merger (ln_q, mlp.0, mlp.2) " +
                    group_thousands(merger.v));
  // What the training ledger needs of the tower (vision_activations.cpp). The MLP's activation:
  // hidden_act, Qwen2VLVisionConfig's default quick_gelu (fc1, act, fc2) or Qwen2.5-VL's silu in
  // the gated MLP; another one is not in the ledger.
  const char* act = v25 ? "silu" : "quick_gelu";
  const std::string hidden_act = v.text({"hidden_act"}).value_or(act);
  if (hidden_act != act)
    v.fail("hidden_act", "\"" + hidden_act + "\" is not the " + mt +
                             " vision MLP activation memplan's ledger counts (" + act + ")");
  VisionTower vt;
  vt.model_type = mt + " vision";
  vt.layers = depth;
  vt.used_layers = depth;
  vt.hidden = d;
  vt.heads = heads;
  vt.intermediate = I;
  vt.activation = act;
  vt.projector = "qwen2_vl_merger";
  vt.text_hidden = th;
  vt.merge = m;
  vt.norm = v25 ? "rmsnorm" : "layernorm";
  vt.gated_mlp = v25;
  r.vision = vt;

  // Dynamic resolution: one language-model token per (p m) x (p m) pixels of the resized image.
  r.image_token_pixels = p * m;
  r.notes.push_back(mt + ": one image = (height / " + to_s(p * m) + ") x (width / " + to_s(p * m) +
                    ") language-model tokens (patch_size " + to_s(p) + " x spatial_merge_size " + to_s(m) +
                    "; the processor resizes each side to a multiple of " + to_s(p * m) + ")");

  const std::string vf = v25 ? "vision_config: depth, hidden_size, intermediate_size, num_heads"
                             : "vision_config: depth, embed_dim, mlp_ratio, num_heads";
  r.parts.push_back({"vision block", depth, block.v, 0, 0,
                     std::string(v25 ? "2 RMSNorms" : "2 LayerNorms") + " + qkv " + to_s(d) + " -> " +
                         to_s(3 * d) + " + proj, with biases + " +
                         (v25 ? "gated MLP (gate, up, down) " : "MLP (fc1, fc2) ") + to_s(d) + " -> " +
                         to_s(I) +
                         " with biases; training with images: frozen (all images of a sample one patch "
                         "sequence, a block-diagonal mask over it)",
                     vf + (v25 ? "" : ", " + mlp_field)});
  r.parts.push_back({"vision patch embedding", 1, patch_embed.v, 0, 0,
                     "Conv3d " + to_s(C) + " x " + to_s(tp) + " x " + to_s(p) + " x " + to_s(p) + " -> " +
                         to_s(d) + ", no bias",
                     "vision_config: in_chans, temporal_patch_size, patch_size"});
  r.parts.push_back(
      {"vision merger", 1, merger.v, 0, 0,
       std::string(v25 ? "ln_q RMSNorm " : "ln_q LayerNorm (weight and bias) ") + to_s(d) + " + " +
           to_s(merged.v) + " -> " + to_s(merged.v) + " -> " + to_s(out) + " with biases",
       std::string("vision_config: spatial_merge_size, ") + (v25 ? "out_hidden_size" : "hidden_size")});
  return r;
}

}  // namespace memplan::detail
