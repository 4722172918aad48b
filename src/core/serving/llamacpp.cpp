// llama.cpp's placement of layers, KV cache and compute buffers on GPUs (see llamacpp.hpp).
#include "core/serving/llamacpp.hpp"

#include <algorithm>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"
#include "core/memory/kv_cache.hpp"
#include "core/models/gguf_mix.hpp"

namespace memplan {
namespace {

constexpr uint64_t k_kv_cell_pad = 256;  // llama.cpp pads the cache to 256 cells
constexpr uint64_t k_mask_pad = 64;      // GGML_KQ_MASK_PAD: the mask's rows are padded to 64
constexpr uint64_t k_f32 = 4;
constexpr uint64_t k_offload_min_batch = 32;  // ggml-cuda.cu offload_op: min_batch_size

uint64_t pad(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

// llama-context.cpp sched_reserve: n_outputs_pp = min(n_tokens, n_outputs_max).
uint64_t output_rows(const LlamaCppRequest& req, uint64_t T) {
  return req.n_outputs ? std::min(T, req.n_outputs) : T;
}

const GgufType& llamacpp_type(const std::string& name) {
  for (const GgufType& t : gguf_types())
    if (name == t.name) return t;
  throw Error("cache type", "unknown ggml type " + name);
}

struct Split {
  std::vector<uint64_t> layer_bytes;
  std::vector<uint64_t> host_expert_bytes;  // per layer: expert tensors kept on the CPU (llama.cpp n_cpu_moe)
  std::vector<uint64_t>
      layer_largest_expert;  // per layer: its largest expert tensor outside host_expert_bytes
  std::vector<uint64_t> layer_largest_dense;  // per layer: its largest tensor that is not an expert's
  uint64_t host_expert_largest = 0;           // the largest expert tensor kept on the CPU
  uint64_t token_embd = 0, output = 0;
  uint64_t output_matrix = 0;  // output.weight, or token_embd loaded again for tied embeddings
};

Split split_tensors(const LlamaCppRequest& req) {
  Split s;
  s.layer_bytes.assign(req.arch.layers, 0);
  s.host_expert_bytes.assign(req.arch.layers, 0);
  s.layer_largest_expert.assign(req.arch.layers, 0);
  s.layer_largest_dense.assign(req.arch.layers, 0);
  bool has_output = false;
  for (const GgufTensor& t : req.weights.tensors) {
    const int64_t layer = gguf_tensor_layer(t.name);
    if (layer >= 0 && static_cast<uint64_t>(layer) < req.arch.layers) {
      const auto l = static_cast<size_t>(layer);
      const bool expert = t.name.find("_exps.") != std::string::npos;
      if (static_cast<uint64_t>(layer) < req.n_cpu_moe && expert) {
        s.host_expert_bytes[l] = checked_add(s.host_expert_bytes[l], t.bytes);
        s.host_expert_largest = std::max(s.host_expert_largest, t.bytes);
      } else {
        s.layer_bytes[l] = checked_add(s.layer_bytes[l], t.bytes);
        uint64_t& largest = expert ? s.layer_largest_expert[l] : s.layer_largest_dense[l];
        largest = std::max(largest, t.bytes);
      }
    } else if (t.name.rfind("token_embd.", 0) == 0) {
      s.token_embd = checked_add(s.token_embd, t.bytes);
    } else {
      s.output = checked_add(s.output, t.bytes);  // output.weight, output_norm, rope factors
      if (t.name == "output.weight") {
        has_output = true;
        s.output_matrix = t.bytes;
      }
    }
  }
  // Tied embeddings: llama.cpp loads token_embd a second time as the output matrix
  // (TENSOR_DUPLICATED), in the output layer's buffer.
  if (!has_output) {
    s.output = checked_add(s.output, s.token_embd);
    s.output_matrix = s.token_embd;
  }
  return s;
}

}  // namespace

std::vector<bool> llamacpp_swa_layers(const TransformerArch& a) {
  const uint64_t window = a.attention_window ? std::min(a.window_layers, a.layers) : 0;
  if (window == 0 || window == a.layers) return {};
  const uint64_t full = a.layers - window;
  const uint64_t pattern = a.layers / full;  // floor(layers / pattern) == full layers
  std::vector<bool> swa(a.layers, false);
  if (a.layers / pattern == full) {
    for (uint64_t il = 0; il < a.layers; ++il) swa[il] = il % pattern < pattern - 1;
  } else {
    for (uint64_t il = 0; il < window; ++il) swa[il] = true;  // no pattern fits: the first ones
  }
  return swa;
}

uint64_t ggml_row_bytes(const std::string& type, uint64_t n) {
  const GgufType& t = llamacpp_type(type);
  if (n % t.block) throw Error("cache type", std::string(t.name) + " rows must be a multiple of its block");
  return n / t.block * t.type_size;
}

namespace {

// What the host's share of the graph adds on GPU 0 (see llamacpp.hpp): op offload runs the
// host's matrix products there with their weights copied in, one weight per split; the host
// layers' attention reads their K and V copied in; the output product copies the output matrix.
// Pipeline parallelism keeps n_copies of every split input. `T` tokens, `act` one [hidden, T] f32.
void host_work_on_gpu(const LlamaCppRequest& req, const Split& s, uint64_t T, uint64_t act, LlamaCppPlan& p) {
  const TransformerArch& a = req.arch;
  LlamaCppDevice& g0 = p.gpus[0];
  if (req.op_offload && T >= k_offload_min_batch) {
    uint64_t host_kv = 0, expert_w = s.host_expert_largest, dense_w = 0;
    for (uint64_t il = 0; il < a.layers && il < p.host.layers; ++il) {  // the host holds layers 0..
      const bool swa = !p.swa_layers.empty() && p.swa_layers[il];
      host_kv = std::max(host_kv, swa ? p.kv_swa_layer_bytes : p.kv_layer_bytes);
      expert_w = std::max(expert_w, s.layer_largest_expert[il]);
      dense_w = std::max(dense_w, s.layer_largest_dense[il]);
    }
    if (p.host.layers) p.compute_host_attention = checked_add(p.compute_attention, host_kv);
    // A host weight's product: the copy beside GPU 0's mask (live through every layer), the
    // residual, and what the MLP holds at its peak: the normed input with the gate and up products,
    // or the gated product with the down product (experts: per routed expert, the down product
    // [hidden, n_used, T]); all f32.
    const uint64_t f32_row = checked_mul(T, k_f32);
    const uint64_t base = checked_add(p.compute_mask, act);
    auto stage = [&](uint64_t w, uint64_t ff, uint64_t out_rows) {
      const uint64_t up = checked_add(act, checked_mul(2 * ff, f32_row));
      const uint64_t down = checked_mul(checked_add(ff, out_rows), f32_row);
      return checked_add(w, checked_add(base, std::max(up, down)));
    };
    const uint64_t used = std::max<uint64_t>(a.experts_per_token, 1);
    const uint64_t expert_ff =
        checked_mul(used, a.expert_intermediate ? a.expert_intermediate : a.intermediate);
    const uint64_t dense_ff = !a.experts || a.dense_layers
                                  ? (a.dense_intermediate ? a.dense_intermediate : a.intermediate)
                                  : a.shared_intermediate;
    if (expert_w) p.compute_host_weight = stage(expert_w, expert_ff, checked_mul(used, a.hidden));
    if (dense_w) p.compute_host_weight = std::max(p.compute_host_weight, stage(dense_w, dense_ff, a.hidden));
    const bool output_on_gpu =
        std::any_of(p.gpus.begin(), p.gpus.end(), [](const LlamaCppDevice& d) { return d.output; });
    // The output product offloads only with 32 output rows or more (its ne[1]).
    if (!output_on_gpu && output_rows(req, T) >= k_offload_min_batch)
      p.compute_host_output = checked_add(p.compute_output, s.output_matrix);
    g0.compute =
        std::max({g0.compute, p.compute_host_attention, p.compute_host_weight, p.compute_host_output});
  }
  // ggml_backend_sched with n_copies > 1: every split input is kept n_copies times for the whole
  // graph (input and output flags, never freed): the hidden state each GPU receives and the mask.
  p.pipeline_copies = llamacpp_pipeline_parallel(req, p) ? std::max<uint64_t>(req.sched_max_copies, 1) : 1;
  if (p.pipeline_copies > 1) {
    const uint64_t mask = p.compute_mask;
    p.compute_pipeline_extra =
        checked_add(checked_mul(p.pipeline_copies - 1, mask), checked_mul(p.pipeline_copies, act));
    const uint64_t all_masks = checked_mul(p.pipeline_copies, mask);
    for (LlamaCppDevice& d : p.gpus) {
      if (!d.layers && !d.output) continue;
      uint64_t c = d.layers ? checked_add(p.compute_attention, p.compute_pipeline_extra) : 0;
      if (d.output)
        c = std::max(
            c, checked_add(p.compute_output, checked_add(all_masks, checked_mul(p.pipeline_copies, act))));
      d.compute = std::max(d.compute, c);
    }
  }
}

LlamaCppPlan plan_at(const LlamaCppRequest& req, uint64_t ngl) {
  const TransformerArch& a = req.arch;
  LlamaCppPlan p;
  p.n_layers = a.layers;
  const Split s = split_tensors(req);
  p.layer_bytes = s.layer_bytes;
  p.token_embd_bytes = s.token_embd;
  p.output_bytes = s.output;

  // The cache rows of one layer, as estimate and serve count them (kv_cache.hpp): K and V of
  // kv_heads x head_dim, or MLA's one K row of kv_lora_rank + qk_rope_head_dim.
  // llama-context.cpp pads n_ctx to 256; a cache that is not unified has one stream per sequence
  // of n_ctx_seq = GGML_PAD(n_ctx / n_seq_max, 256) cells (llama-kv-cache.cpp n_stream).
  const uint64_t n_seq = std::max<uint64_t>(req.n_seq, 1);
  const bool streams = !req.kv_unified && n_seq > 1;
  const uint64_t cells_per_stream =
      streams ? pad(pad(req.n_ctx, k_kv_cell_pad) / n_seq, k_kv_cell_pad) : pad(req.n_ctx, k_kv_cell_pad);
  p.n_ctx_cells = streams ? checked_mul(cells_per_stream, n_seq) : cells_per_stream;
  const KvRowElements row = kv_row_elements(a);
  const uint64_t row_bytes =
      checked_add(ggml_row_bytes(req.cache_k, row.k), row.v ? ggml_row_bytes(req.cache_v, row.v) : 0);
  p.kv_k_layer_bytes = checked_mul(ggml_row_bytes(req.cache_k, row.k), p.n_ctx_cells);
  p.kv_layer_bytes = checked_mul(row_bytes, p.n_ctx_cells);
  // Window layers (llama-kv-cache-iswa.cpp): their own cache of GGML_PAD(min(size, n_swa x
  // (unified ? n_seq_max : 1) + n_ubatch), 256) cells per stream, the whole size with --swa-full.
  p.swa_layers = llamacpp_swa_layers(a);
  if (!p.swa_layers.empty()) {
    const uint64_t window_cells =
        checked_add(checked_mul(a.attention_window, streams ? 1 : n_seq), req.n_ubatch);
    const uint64_t per_stream =
        req.swa_full ? cells_per_stream : pad(std::min(cells_per_stream, window_cells), k_kv_cell_pad);
    p.n_swa_cells = streams ? checked_mul(per_stream, n_seq) : per_stream;
    p.kv_swa_layer_bytes = checked_mul(row_bytes, p.n_swa_cells);
  }

  // The compute buffer: the graph for one micro-batch of T tokens over all n_kv cells, every
  // token an output (the reservation's worst case); its peak is the larger of two stages. The
  // scores KQ are n_kv x T x heads fp32 and softmax reuses their buffer (ikawrakow/ik_llama.cpp
  // PR 237 describes the same); the stage sums are checked against printed compute buffers in
  // tests/data/llamacpp_logs (105.00 MiB exactly for TriLM, -1.4% for phi-4).
  const uint64_t T = std::min(req.n_ctx, req.n_ubatch), n_kv = p.n_ctx_cells;
  const uint64_t act = checked_mul(checked_mul(a.hidden, T), k_f32);  // one f32 activation [hidden, T]
  // The queries [q head, heads, T] f32 (heads x head_dim need not be hidden: Qwen3-30B-A3B 32 x 128
  // on 2048; MLA's q heads are qk_nope + qk_rope wide).
  const uint64_t q_head = a.mla() ? a.qk_nope_head_dim + a.qk_rope_head_dim : a.resolved_head_dim();
  const uint64_t q_act = checked_mul(checked_mul(checked_mul(a.heads, q_head), T), k_f32);
  p.compute_mask = checked_mul(checked_mul(n_kv, pad(T, k_mask_pad)), req.flash_attn ? 2 : k_f32);
  if (req.flash_attn) {
    // FA: the f16 mask, the residual stream, the queries and the attention output.
    p.compute_attention = checked_add(p.compute_mask, checked_add(act, 2 * q_act));
  } else {
    // Without FA: the f32 scores KQ [n_kv, T, heads] (softmax in place), the f32 mask, the
    // residual stream and the queries.
    p.compute_attention = checked_add(checked_mul(checked_mul(checked_mul(n_kv, T), a.heads), k_f32),
                                      checked_add(p.compute_mask, checked_add(act, q_act)));
  }
  // The output stage: f32 logits [vocab, T] and the normed hidden state feeding them.
  // The output rows the reservation keeps: every token, or n_outputs_max (llama-server from b9460).
  const uint64_t rows = output_rows(req, T);
  p.compute_output = checked_add(checked_mul(checked_mul(a.vocab, rows), k_f32),
                                 checked_mul(checked_mul(a.hidden, rows), k_f32));

  const size_t n_gpu = req.gpu_bytes.size();
  p.gpus.assign(n_gpu, LlamaCppDevice{});
  const uint64_t n = a.layers;
  // llama-model.cpp load_tensors: layer il (the output layer is il = n) is on a GPU from
  // i_gpu_start on. Since PR 18148 (2025-12-17) i_gpu_start = max(n + 1 - ngl, 0): the output layer
  // first, then the last ngl - 1 layers; before it max(n - ngl, 0): the last ngl layers, the output
  // layer only at ngl = n + 1.
  const uint64_t gpu_start = req.output_first ? (ngl >= n + 1 ? 0 : n + 1 - ngl) : (ngl >= n ? 0 : n - ngl);
  const uint64_t act_layers = n_gpu ? std::min(ngl, n + 1) : 0;
  p.n_gpu_layers = act_layers;
  std::vector<double> splits(n_gpu, 0.0);
  double sum = 0;
  for (size_t i = 0; i < n_gpu; ++i) {
    sum += req.tensor_split.empty() ? static_cast<double>(req.gpu_bytes[i]) : req.tensor_split[i];
    splits[i] = sum;
  }
  for (double& x : splits) x = sum > 0 ? x / sum : 1.0;
  for (uint64_t il = 0; il <= n; ++il) {
    LlamaCppDevice* d = &p.host;
    if (il >= gpu_start && il - gpu_start < act_layers) {
      const double at = static_cast<double>(il - gpu_start) / static_cast<double>(act_layers);
      size_t g = static_cast<size_t>(std::upper_bound(splits.begin(), splits.end(), at) - splits.begin());
      d = &p.gpus[std::min(g, n_gpu - 1)];
    }
    if (il < n) {
      d->model = checked_add(d->model, s.layer_bytes[il]);
      const bool swa = !p.swa_layers.empty() && p.swa_layers[il];
      d->kv = checked_add(d->kv, swa ? p.kv_swa_layer_bytes : p.kv_layer_bytes);
      d->layers += 1;
      p.host.model = checked_add(p.host.model, s.host_expert_bytes[il]);
    } else {
      d->model = checked_add(d->model, s.output);
      d->output = true;
    }
  }
  p.host.model = checked_add(p.host.model, s.token_embd);
  for (LlamaCppDevice& d : p.gpus) {
    if (d.layers) d.compute = p.compute_attention;
    if (d.output) d.compute = std::max(d.compute, p.compute_output);
  }
  if (n_gpu) host_work_on_gpu(req, s, T, act, p);
  if (!p.gpus.empty()) {
    p.gpus[0].projector = req.mmproj_bytes;
    for (LlamaCppDevice& d : p.gpus) d.reserve = req.reserve_bytes;
  }
  p.gpu_fits.assign(n_gpu, true);
  for (size_t i = 0; i < n_gpu; ++i) {
    p.gpu_fits[i] = p.gpus[i].total() <= req.gpu_bytes[i];
    p.fits = p.fits && p.gpu_fits[i];
  }
  if (!p.fits && p.pipeline_copies > 1) {
    // llama-context.cpp sched_reserve: when the pipeline's compute buffers cannot be allocated
    // ("compute buffer allocation failed, retrying without pipeline parallelism") it reserves
    // again with one copy. The model and the KV cache are allocated by then: only a failure in
    // the compute stage retries.
    bool before_compute = true;
    for (size_t i = 0; i < n_gpu; ++i)
      before_compute =
          before_compute && p.gpus[i].model + p.gpus[i].kv + p.gpus[i].reserve <= req.gpu_bytes[i];
    if (before_compute) {
      LlamaCppRequest one = req;
      one.sched_max_copies = 1;
      LlamaCppPlan retried = plan_at(one, ngl);
      retried.pipeline_retried = true;
      return retried;
    }
  }
  return p;
}

}  // namespace

bool llamacpp_pipeline_parallel(const LlamaCppRequest& req, const LlamaCppPlan& plan) {
  return plan.gpus.size() > 1 && plan.n_gpu_layers > req.arch.layers && req.n_cpu_moe == 0;
}

std::optional<uint64_t> largest_ngl(const LlamaCppRequest& req) {
  // Every count from the top (layers + 1 is everything, the output layer included) down: with
  // several GPUs one more layer can move others between them, so no bisection.
  for (uint64_t ngl = req.arch.layers + 1;; --ngl) {
    if (plan_at(req, ngl).fits) return ngl;
    if (ngl == 0) return std::nullopt;
  }
}

LlamaCppPlan plan_llamacpp(const LlamaCppRequest& req) {
  if (!req.arch.layers || !req.arch.heads || !req.arch.hidden)
    throw Error(Field::model, "llama.cpp planning needs the model's layers, heads and hidden size");
  if (!req.tensor_split.empty() && req.tensor_split.size() != req.gpu_bytes.size())
    throw Error("tensor split", "has " + std::to_string(req.tensor_split.size()) + " parts for " +
                                    std::to_string(req.gpu_bytes.size()) + " GPUs");
  if (req.n_gpu_layers) return plan_at(req, *req.n_gpu_layers);
  return plan_at(req, largest_ngl(req).value_or(0));
}

}  // namespace memplan
