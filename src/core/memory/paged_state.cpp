#include "core/memory/paged_state.hpp"

#include <algorithm>

#include "core/base/checked.hpp"

namespace memplan {
namespace {

struct Tally {
  PagedShare s;
  // `count` tensors of rows x cols numbers, paged when each holds at least 1e5.
  void add(uint64_t rows, uint64_t cols, uint64_t count) {
    const uint64_t n = checked_mul(rows, cols, "paged optimizer state");
    if (n < k_paged_min_elements || count == 0) return;
    s.elements =
        checked_add(s.elements, checked_mul(n, count, "paged optimizer state"), "paged optimizer state");
    s.tensors = checked_add(s.tensors, count, "paged optimizer state");
  }
};

void add_adapters(Tally& t, uint64_t rank, const LoraMatrix* m, uint8_t n, uint64_t blocks) {
  for (uint8_t i = 0; i < n; ++i) {
    const uint64_t count = checked_mul(m[i].count, blocks, "paged optimizer state");
    t.add(rank, m[i].in, count);   // A
    t.add(m[i].out, rank, count);  // B
  }
}

void add_mlp(Tally& t, const TransformerArch& a, uint64_t width, uint64_t count) {
  if (width == 0) return;
  t.add(a.hidden, width, checked_mul(a.gated_mlp ? 3 : 2, count, "paged optimizer state"));
}

PagedShare full_model(const TransformerArch& a) {
  Tally t;
  const uint64_t h = a.hidden, hd = a.resolved_head_dim();
  if (!a.mla()) {
    t.add(h, a.heads * hd, a.layers);                    // q
    t.add(h, a.resolved_kv_heads() * hd, 2 * a.layers);  // k, v
    t.add(a.heads * hd, h, a.layers);                    // o
  }
  const uint64_t moe = a.moe_layers();
  const uint64_t dense = a.layers - moe;
  const uint64_t dense_width = a.dense_intermediate ? a.dense_intermediate : a.intermediate;
  add_mlp(t, a, dense_width, dense);
  if (moe) {
    const uint64_t expert_width = a.expert_intermediate ? a.expert_intermediate : a.intermediate;
    add_mlp(t, a, expert_width, checked_mul(a.experts, moe, "paged optimizer state"));
    add_mlp(t, a, a.shared_intermediate, moe);
    t.add(h, a.experts, moe);  // router
  }
  t.add(a.vocab, h, a.tied_embeddings ? 1 : 2);
  if (a.position_embedding == "learned") t.add(a.max_positions, h, 1);
  t.s.known = true;
  return t.s;
}

}  // namespace

PagedShare paged_share(const ModelSpec& model, const std::optional<LoraAdapters>& lora, uint64_t trainable) {
  if (lora) {
    Tally t;
    add_adapters(t, lora->rank, lora->attention.data(), lora->attention_count, lora->attention_blocks);
    add_adapters(t, lora->rank, lora->mlp.data(), lora->mlp_count, lora->mlp_blocks);
    t.s.known = true;
    t.s.elements = std::min(t.s.elements, trainable);
    return t.s;
  }
  const bool full = trainable == model.parameters;
  if (!full || !model.arch || model.arch->layers == 0 || model.arch->hidden == 0 ||
      model.arch->encoder_decoder)
    return {};
  PagedShare s = full_model(*model.arch);
  if (s.elements > trainable) return {};  // the listing does not match the count: keep it all on the GPU
  return s;
}

}  // namespace memplan
