// SGLang's start-up budget: free memory before and after the weights, the mem_fraction_static
// margin, then the KV pool in tokens of cell_size bytes (see sglang_budget.hpp for the engine
// code it follows).
#include "core/serving/sglang_budget.hpp"

#include "core/serving/cuda_context.hpp"
#include "core/serving/model_weights.hpp"

#include <algorithm>
#include <cmath>

#include <memplan/error.hpp>
#include <memplan/estimate.hpp>
#include "core/base/checked.hpp"
#include "core/models/arch_layout.hpp"

namespace memplan {
namespace {

uint64_t mul_serving(uint64_t a, uint64_t b) { return checked_mul(a, b, "serving bytes"); }

constexpr uint64_t k_mib = 1ull << 20;
constexpr uint64_t k_round_large = 2 * k_mib;       // CUDACachingAllocator kRoundLarge
constexpr uint64_t k_min_large_alloc = 10 * k_mib;  // kMinLargeAlloc: from here a tensor is its own segment

// What the caching allocator adds to one tensor of `bytes`: from 10 MiB up the segment is the size
// rounded up to 2 MiB; smaller tensors share 2 MiB / 20 MiB segments (not counted).
uint64_t rounding_of(uint64_t bytes) {
  if (bytes < k_min_large_alloc) return 0;
  const uint64_t rest = bytes % k_round_large;
  return rest ? k_round_large - rest : 0;
}

// The engine's per-GPU weight tensors of a dense 16-bit transformer (qkv and gate_up fused, as
// SGLang's and vLLM's QKVParallelLinear / MergedColumnParallelLinear hold them) and what rounding
// their segments adds.
uint64_t rounding_bytes(const TransformerArch& a, const InferenceSplit& sp, uint64_t element_bytes) {
  const uint64_t hd = a.resolved_head_dim();
  const uint64_t qkv = mul_serving(mul_serving(sp.heads_per_gpu + 2 * sp.kv_heads_per_gpu, hd),
                                   mul_serving(a.hidden, element_bytes));
  const uint64_t o = mul_serving(mul_serving(sp.heads_per_gpu, hd), mul_serving(a.hidden, element_bytes));
  const uint64_t gate_up = mul_serving(mul_serving(a.gated_mlp ? 2 : 1, sp.intermediate_per_gpu),
                                       mul_serving(a.hidden, element_bytes));
  const uint64_t down = mul_serving(sp.intermediate_per_gpu, mul_serving(a.hidden, element_bytes));
  const uint64_t per_layer = rounding_of(qkv) + rounding_of(o) + rounding_of(gate_up) + rounding_of(down);
  const uint64_t vocab = rounding_of(mul_serving(sp.vocab_per_gpu, mul_serving(a.hidden, element_bytes)));
  const uint64_t ends = sp.pp == 1 && !a.tied_embeddings ? 2 * vocab : vocab;
  return checked_add(mul_serving(per_layer, sp.layers_per_gpu), ends, "rounding");
}

}  // namespace

SglangBudget sglang_budget(const EstimateRequest& r, uint64_t gpu_total_bytes, uint64_t gpu_mem_mib,
                           const SglangSettings& in) {
  if (!r.model.arch)
    throw Error(Field::model, "serving needs the model's architecture (a preset or a config.json)");
  if (in.mem_fraction_static && !(*in.mem_fraction_static > 0.0 && *in.mem_fraction_static < 1.0))
    throw Error("mem_fraction_static", "must be in (0, 1)");
  if (in.page_size == 0) throw Error("page_size", "must be at least 1");
  TransformerArch arch = *r.model.arch;
  apply_layout_defaults(arch);

  SglangBudget b;
  b.settings = in;
  SglangSettings& s = b.settings;
  b.model_context = arch.max_positions;
  if (s.context_length == 0) s.context_length = arch.max_positions;
  if (s.context_length == 0)
    throw Error("context_length", "the model does not say its context length; give one");
  b.split = inference_split(r.model, s.tp, s.pp);

  // The defaults that hang on the GPU's size, then mem_fraction_static.
  b.gpu_mem_mib = gpu_mem_mib;
  const SglangGpuDefaults d = sglang_gpu_defaults(s.rules, gpu_mem_mib, s.tp);
  b.gpu_bucket = d.bucket;
  if (s.chunked_prefill_size == 0) s.chunked_prefill_size = d.chunked_prefill_size;
  if (s.cuda_graph_max_bs == 0) s.cuda_graph_max_bs = d.cuda_graph_max_bs;
  if (!s.mem_fraction_static) {
    b.mem_fraction_default = true;
    const SglangFraction f = sglang_default_fraction(s.rules, gpu_mem_mib, s.tp, s.pp, s.chunked_prefill_size,
                                                     s.cuda_graph_max_bs, arch.mla());
    b.reserved_mib = f.reserved_mib;
    b.piecewise_mib = f.piecewise_mib;
    b.fraction_rule = f.rule;
    if (!(f.fraction > 0.0))
      throw Error("mem_fraction_static", "the GPU is smaller than SGLang's reserve; give one");
    s.mem_fraction_static = f.fraction;
  }
  const double fraction = *s.mem_fraction_static;

  // Free memory before the weights: the GPU less what lives outside torch's allocator.
  b.gpu_total_bytes = gpu_total_bytes;
  if (s.non_torch_bytes) {
    b.non_torch_bytes = *s.non_torch_bytes;
  } else {
    b.context_bytes = k_cuda_context_bytes;
    b.comm_parts = sglang_comm_parts(s.tp, s.pp, s.nvlink);
    b.non_torch_bytes = b.context_bytes;
    for (const SglangCommPart& p : b.comm_parts)
      b.non_torch_bytes = checked_add(b.non_torch_bytes, p.bytes, "non-torch memory");
  }
  b.total_bytes = gpu_total_bytes > b.non_torch_bytes ? gpu_total_bytes - b.non_torch_bytes : 0;

  // Weights on this GPU, with the rotary cos/sin cache the model builds on the GPU at init.
  const ElementCost act = r.recipe.activations.cost;
  b.model_weight_bytes = model_weight_bytes(r);
  b.parameter_bytes = weight_bytes_per_gpu(b.model_weight_bytes, r.model.parameters, b.split);
  if (arch.position_embedding == "rotary" && !arch.mla()) {
    const uint64_t positions = arch.max_positions ? arch.max_positions : s.context_length;
    b.rotary_bytes = bytes_for(mul_serving(positions, arch.resolved_head_dim()), act, "rotary cache");
  }
  // Allocator rounding, where every weight is a plain 16-bit tensor of a known shape.
  const bool plain16 = r.recipe.weights.cost == ElementCost{2, 1} && !r.quantize && !r.llama_ftype;
  b.rounding_derived = plain16 && arch.experts == 0 && !arch.mla() && arch.hidden && arch.heads;
  if (b.rounding_derived) b.rounding_bytes = rounding_bytes(arch, b.split, 2);
  b.weight_bytes =
      checked_add(checked_add(b.parameter_bytes, b.rotary_bytes, "weights"), b.rounding_bytes, "weights");
  b.avail_bytes = b.total_bytes > b.weight_bytes ? b.total_bytes - b.weight_bytes : 0;
  b.margin_bytes = static_cast<uint64_t>(static_cast<double>(b.total_bytes) * (1.0 - fraction));
  b.rest_bytes = static_cast<int64_t>(b.avail_bytes) - static_cast<int64_t>(b.margin_bytes);

  // The cell: one token of every layer's cache on this GPU.
  const ElementCost kv = r.kv_format ? storage_format(*r.kv_format).cost : act;
  b.kv_element_bytes = kv.den == 1 ? kv.num : 2;
  b.mla = arch.mla();
  b.cell_elements = b.mla ? arch.kv_lora_rank + arch.qk_rope_head_dim
                          : mul_serving(mul_serving(2, b.split.kv_heads_per_gpu), arch.resolved_head_dim());
  b.cell_size = bytes_for(mul_serving(b.cell_elements, b.split.layers_per_gpu), kv, "KV cell");
  b.profiled_tokens = b.rest_bytes > 0 ? static_cast<uint64_t>(b.rest_bytes) / b.cell_size : 0;
  b.max_total_num_tokens = b.profiled_tokens;
  if (s.max_total_tokens && s.max_total_tokens < b.max_total_num_tokens) {
    b.max_total_num_tokens = s.max_total_tokens;
    b.capped = true;
  }
  b.max_total_num_tokens = b.max_total_num_tokens / s.page_size * s.page_size;
  b.pool_bytes = mul_serving(b.max_total_num_tokens, b.cell_size);
  b.max_concurrency = static_cast<double>(b.max_total_num_tokens) / static_cast<double>(s.context_length);
  b.fits = b.max_total_num_tokens >= s.context_length;
  return b;
}

}  // namespace memplan
