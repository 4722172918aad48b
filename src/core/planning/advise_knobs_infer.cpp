// The inference knobs of advise() (see advise_knobs_infer.hpp).
#include "core/planning/advise_knobs_infer.hpp"

#include <memplan/error.hpp>
#include "core/base/checked.hpp"
#include "core/formats/llama_quant.hpp"
#include "core/models/gguf_mix.hpp"

namespace memplan::advice {
namespace {

bool inference_transformer(const EstimateRequest& r) {
  return r.mode == Mode::infer && r.model.arch.has_value() && r.model.mlp_widths.empty() && !r.parallel &&
         r.model.arch->causal && !r.model.arch->encoder_decoder;
}

// The llama.cpp file types advise offers, best precision first.
const char* const k_mixes[] = {"q8_0", "q6_k", "q5_k_m", "q4_k_m", "iq4_xs", "q3_k_m", "q2_k"};

}  // namespace

std::vector<Candidate> quantize_weights(const Candidate& c, const KnobContext&) {
  const EstimateRequest& r = c.request;
  if (!inference_transformer(r) || r.llama_ftype || r.quantize) return {};
  // Only when the weights are wider than the mix: an 8-bit or smaller file is left alone.
  const uint64_t now = r.stored_weights ? r.model.weight_bytes : 0;
  std::vector<Candidate> out;
  int rank = 0;
  for (const char* name : k_mixes) {
    const LlamaFtype& f = *find_llama_ftype(name);
    EstimateRequest n = r;
    use_llama_ftype(n, f.id);
    ++rank;
    if (now && n.model.weight_bytes >= now) continue;
    AdviceChange ch;
    ch.knob = AdviceKnob::quantize;
    ch.tier = 2;
    ch.cost_rank = 54 + rank;
    ch.format = f.name;
    ch.host_bytes = n.model.weight_bytes;  // the weights' bytes in that format
    out.push_back(with(c, n, ch));
  }
  return out;
}

std::vector<Candidate> quantize_kv(const Candidate& c, const KnobContext&) {
  const EstimateRequest& r = c.request;
  if (!inference_transformer(r) || !r.seq) return {};
  std::vector<Candidate> out;
  const StorageFormatId formats[] = {StorageFormatId::q8_0, StorageFormatId::q4_0};
  int rank = 0;
  for (StorageFormatId id : formats) {
    ++rank;
    if (r.kv_format && storage_format(*r.kv_format).cost.bytes() <= storage_format(id).cost.bytes()) continue;
    EstimateRequest n = r;
    n.kv_format = id;
    AdviceChange ch;
    ch.knob = AdviceKnob::kv_quantize;
    ch.tier = 1;
    ch.cost_rank = 34 + rank;
    ch.format = storage_format(id).name;
    out.push_back(with(c, n, ch));
  }
  return out;
}

// llama.cpp -ngl: the last N layers on the GPU, the rest (and their KV cache) in host memory.
// The candidate is the GPU's share: N layers' weights (as the GGUF stores them) and N layers of
// KV cache and activations; the largest N whose estimate fits.
std::vector<Candidate> layer_offload(const Candidate& c, const KnobContext& ctx) {
  const EstimateRequest& r = c.request;
  if (!inference_transformer(r) || r.model.arch->layers < 2) return {};
  const TransformerArch& a = *r.model.arch;
  const LlamaFtype& f = *llama_ftype(r.llama_ftype.value_or(1));  // f16 unless a file type is planned
  const GgufFile g = gguf_of_arch(a, f);
  std::vector<uint64_t> layer(a.layers, 0);
  uint64_t total = 0;
  for (const GgufTensor& t : g.tensors) {
    const int64_t l = gguf_tensor_layer(t.name);
    total = checked_add(total, t.bytes);
    if (l >= 0) layer[static_cast<size_t>(l)] = checked_add(layer[static_cast<size_t>(l)], t.bytes);
  }
  // GPU weights for the last n repeating layers; token_embd and the output layer stay on the host.
  for (uint64_t n = a.layers - 1; n >= 1; --n) {
    uint64_t bytes = 0;
    for (uint64_t i = a.layers - n; i < a.layers; ++i) bytes = checked_add(bytes, layer[i]);
    EstimateRequest q = r;
    q.model.arch->layers = n;
    q.model.weight_bytes = bytes;
    q.stored_weights = true;
    EstimateRequest probe = q;
    probe.replay_below = ctx.memory;  // above it the verdict is "no" without the allocator replay
    if (estimate(probe).required_bytes() > ctx.memory) continue;
    AdviceChange ch;
    ch.knob = AdviceKnob::layer_offload;
    ch.tier = 2;
    ch.cost_rank = 84;
    ch.gpus = n;            // layers on the GPU (-ngl)
    ch.was = a.layers + 1;  // of the layers and the output layer
    ch.format = f.name;
    ch.host_bytes = total - bytes;  // weights left in host memory (their layers' KV cache stays there too)
    return {with(c, q, ch)};
  }
  return {};
}

}  // namespace memplan::advice
