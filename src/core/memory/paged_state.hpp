#pragma once
// bitsandbytes' paged optimizers (PagedAdamW, PagedAdamW8bit; HF Trainer's paged_adamw_32bit /
// paged_adamw_8bit, Lit-GPT's QLoRA recipe) allocate the state of every tensor of at least 100,000
// numbers with cudaMallocManaged (Optimizer8bit.get_state_buffer: `p.numel() < 1e5` stays a
// torch tensor): unified memory the driver pages to the host under pressure, outside torch's
// caching allocator, so max_memory_allocated does not count it and it cannot cause an OOM.

#include <cstdint>
#include <optional>

#include <memplan/lora.hpp>
#include <memplan/model.hpp>

namespace memplan {

inline constexpr uint64_t k_paged_min_elements = 100000;

struct PagedShare {
  bool known = false;     // false: the trainable tensors' shapes are unknown (all state on the GPU)
  uint64_t elements = 0;  // trainable numbers in tensors of k_paged_min_elements or more
  uint64_t tensors = 0;   // those tensors
};

// LoRA: each adapter's A (r x in) and B (out x r) on its own. Full training of a transformer: the
// weight matrices memplan can list (attention projections without latent attention, MLP and expert
// matrices, router, embeddings, LM head, learned positions); norms, biases and anything unlisted
// stay on the GPU, so the GPU share is never under-counted. Otherwise unknown.
PagedShare paged_share(const ModelSpec& model, const std::optional<LoraAdapters>& lora, uint64_t trainable);

}  // namespace memplan
