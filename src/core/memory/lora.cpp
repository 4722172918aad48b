#include <memplan/lora.hpp>

#include <algorithm>
#include <sstream>
#include <vector>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"
#include "core/base/did_you_mean.hpp"
#include "core/base/text.hpp"
#include "core/models/arch_layout.hpp"

namespace memplan {
namespace {

struct TargetName {
  const char* name;
  bool LoraTargets::*a;
  bool LoraTargets::*b;  // c_attn names three, c_proj two: the rest repeat the first
  bool LoraTargets::*c;
};

const TargetName k_names[] = {
    {"q", &LoraTargets::q, &LoraTargets::q, &LoraTargets::q},
    {"q_proj", &LoraTargets::q, &LoraTargets::q, &LoraTargets::q},
    {"query", &LoraTargets::q, &LoraTargets::q, &LoraTargets::q},
    {"k", &LoraTargets::k, &LoraTargets::k, &LoraTargets::k},
    {"k_proj", &LoraTargets::k, &LoraTargets::k, &LoraTargets::k},
    {"key", &LoraTargets::k, &LoraTargets::k, &LoraTargets::k},
    {"v", &LoraTargets::v, &LoraTargets::v, &LoraTargets::v},
    {"v_proj", &LoraTargets::v, &LoraTargets::v, &LoraTargets::v},
    {"value", &LoraTargets::v, &LoraTargets::v, &LoraTargets::v},
    {"o", &LoraTargets::o, &LoraTargets::o, &LoraTargets::o},
    {"o_proj", &LoraTargets::o, &LoraTargets::o, &LoraTargets::o},
    {"out_proj", &LoraTargets::o, &LoraTargets::o, &LoraTargets::o},
    {"gate", &LoraTargets::gate, &LoraTargets::gate, &LoraTargets::gate},
    {"gate_proj", &LoraTargets::gate, &LoraTargets::gate, &LoraTargets::gate},
    {"up", &LoraTargets::up, &LoraTargets::up, &LoraTargets::up},
    {"up_proj", &LoraTargets::up, &LoraTargets::up, &LoraTargets::up},
    {"c_fc", &LoraTargets::up, &LoraTargets::up, &LoraTargets::up},
    {"down", &LoraTargets::down, &LoraTargets::down, &LoraTargets::down},
    {"down_proj", &LoraTargets::down, &LoraTargets::down, &LoraTargets::down},
    {"c_attn", &LoraTargets::q, &LoraTargets::k, &LoraTargets::v},
    {"qkv", &LoraTargets::q, &LoraTargets::k, &LoraTargets::v},
    {"c_proj", &LoraTargets::o, &LoraTargets::down, &LoraTargets::down},
};

struct Widths {
  uint64_t h, qd, kvd, ff;
};

Widths widths_of(const TransformerArch& a) {
  const uint64_t hd = a.resolved_head_dim();
  uint64_t ff = a.intermediate ? a.intermediate : checked_mul(4, a.hidden, "LoRA parameters");
  return {a.hidden, checked_mul(a.heads, hd, "LoRA parameters"),
          checked_mul(a.resolved_kv_heads(), hd, "LoRA parameters"), ff};
}

// r x (d_in + d_out)
uint64_t adapter(uint64_t r, uint64_t in, uint64_t out) {
  return checked_mul(r, checked_add(in, out, "LoRA parameters"), "LoRA parameters");
}

}  // namespace

LoraTargets parse_lora_targets(std::string_view subject, std::string_view text, uint64_t rank) {
  LoraTargets t;
  t.rank = rank;
  std::stringstream ss{std::string(text)};
  std::string item;
  std::vector<std::string> known{"all"};
  for (const TargetName& n : k_names) known.push_back(n.name);
  while (std::getline(ss, item, ',')) {
    const std::string key = to_lower(item);
    if (key == "all") {
      t.q = t.k = t.v = t.o = t.gate = t.up = t.down = true;
      continue;
    }
    const auto* it = std::find_if(std::begin(k_names), std::end(k_names),
                                  [&](const TargetName& n) { return key == n.name; });
    if (it == std::end(k_names))
      throw Error(std::string(subject), "\"" + item +
                                            "\" is not a LoRA target (expected q, k, v, o, gate, up, down, " +
                                            "c_attn, c_fc, c_proj or all" + did_you_mean(item, known) + ")");
    t.*(it->a) = t.*(it->b) = t.*(it->c) = true;
  }
  if (!t.any())
    throw Error(std::string(subject), "\"" + std::string(text) + "\" names no matrix (expected e.g. q,v)");
  return t;
}

std::string lora_target_names(const LoraTargets& t, const TransformerArch& arch) {
  std::string out;
  auto add = [&out](const char* n) { out += (out.empty() ? "" : ",") + std::string(n); };
  if (arch.fused_qkv) {
    if (t.q || t.k || t.v) add("c_attn (fused q,k,v)");
  } else {
    if (t.q) add("q_proj");
    if (t.k) add("k_proj");
    if (t.v) add("v_proj");
  }
  if (t.o) add("o_proj");
  if (t.gate && arch.gated_mlp) add("gate_proj");
  if (t.up) add("up_proj");
  if (t.down) add("down_proj");
  return out;
}

LoraAdapters lora_adapters(const ModelSpec& model, const LoraTargets& t) {
  if (!model.arch || model.arch->layers == 0 || model.arch->hidden == 0 || model.arch->heads == 0)
    throw Error("LoRA", "needs a transformer architecture (" + field_ref(Field::model) + ", " +
                            field_ref(Field::config) + " or " + field_ref(Field::layers) + "/" +
                            field_ref(Field::hidden) + "/" + field_ref(Field::heads) + ")");
  if (t.rank == 0) throw Error("LoRA", "rank must be at least 1");
  TransformerArch a = *model.arch;
  apply_layout_defaults(a);  // GPT-2 fuses q/k/v into c_attn
  const Widths w = widths_of(a);
  const uint64_t r = t.rank;
  // Attention blocks: one per layer, and self + cross attention per decoder layer of a T5.
  const uint64_t attn_blocks =
      checked_add(a.layers, a.encoder_decoder ? checked_mul(2, a.decoder_layers) : 0);
  const uint64_t mlp_blocks = checked_add(a.layers, a.encoder_decoder ? a.decoder_layers : 0);
  const uint64_t experts = a.experts > 0 ? a.experts : 1;
  LoraAdapters out;
  out.rank = r;
  out.targets = t;
  out.fused_qkv = a.fused_qkv;
  out.gated_mlp = a.gated_mlp;
  uint64_t attn = 0, attn_matrices = 0, mlp = 0, mlp_matrices = 0;
  auto add_attn = [&](uint64_t in, uint64_t o) {
    attn = checked_add(attn, adapter(r, in, o), "LoRA parameters");
    attn_matrices += 1;
    out.attention[out.attention_count++] = {1, in, o};
  };
  auto add_mlp = [&](uint64_t in, uint64_t o) {
    mlp = checked_add(mlp, checked_mul(experts, adapter(r, in, o), "LoRA parameters"), "LoRA parameters");
    mlp_matrices += experts;
    out.mlp[out.mlp_count++] = {experts, in, o};
  };
  if (a.fused_qkv) {
    if (t.q || t.k || t.v) add_attn(w.h, w.qd + 2 * w.kvd);
  } else {
    if (t.q) add_attn(w.h, w.qd);
    if (t.k) add_attn(w.h, w.kvd);
    if (t.v) add_attn(w.h, w.kvd);
  }
  if (t.o) add_attn(w.qd, w.h);
  if (t.gate && a.gated_mlp) add_mlp(w.h, w.ff);
  if (t.up) add_mlp(w.h, w.ff);
  if (t.down) add_mlp(w.ff, w.h);
  if (attn_matrices + mlp_matrices == 0)
    throw Error(Field::lora_targets,
                "adapts no matrix of this model (gate needs a gated MLP; expected e.g. q,v)");
  out.attention_blocks = attn_blocks;
  out.mlp_blocks = mlp_blocks;
  out.matrices = attn_matrices * attn_blocks + mlp_matrices * mlp_blocks;
  out.parameters = checked_add(checked_mul(attn_blocks, attn, "LoRA parameters"),
                               checked_mul(mlp_blocks, mlp, "LoRA parameters"), "LoRA parameters");
  return out;
}

std::string lora_target_names(const LoraAdapters& adapters) {
  TransformerArch shape;
  shape.fused_qkv = adapters.fused_qkv;
  shape.gated_mlp = adapters.gated_mlp;
  return lora_target_names(adapters.targets, shape);
}

}  // namespace memplan
