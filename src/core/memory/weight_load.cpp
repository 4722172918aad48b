// The weights' load, tensor by tensor (weight_load.hpp). The rules, each from the loader's code:
//
// transformers (5.24.0, from_pretrained with BitsAndBytesConfig(load_in_4bit=True)):
//   warm-up    modeling_utils.py caching_allocator_warmup allocates one block and frees it, so the
//              allocator caches one segment the loaded weights are then split from. From 4.51 for
//              quantised loads (4.50 skips it under a quantizer): 4.51-4.57 allocate half the
//              meta-model's bytes (factor 4: quantizers/base.py get_accelerator_warm_up_factor),
//              the meta Linear4bit weights being in the 16-bit load format: 1 B per parameter;
//              5.x counts each parameter at its quantised size (quantizer_bnb_4bit.py
//              quantized_element_size 0.5, the other parameters at their own), absmax left out.
//   staging    core_model_loading.py loads one tensor at a time under on-the-fly quantisation
//              (the thread pool is off, "avoid worker threads loading full-precision tensors to GPU
//              faster than the main thread can quantize them"): `tensor.to(device=device,
//              dtype=dtype)` puts the weight on the GPU in 16 bits (a blocking copy converts on the
//              host), integrations/bitsandbytes.py `Params4bit(value, ...).to(value.device)`
//              quantises it there (bitsandbytes nn/modules.py _quantize: the packed data and the
//              absmax), and the 16-bit copy is freed before the next tensor. The embedding, the
//              norms and the LM head are not quantised (get_keys_to_not_convert).
//
// Lit-GPT (litgpt 0.5.9 finetune/lora.py, Lightning Fabric's BitsandbytesPrecision):
//   init       `fabric.init_module(empty_init=(fabric.world_size > 1))`: one GPU builds every
//              module on the GPU for real; the precision's context makes each nn.Linear a
//              _NF4Linear, which quantises at construction (fabric/plugins/precision/
//              bitsandbytes.py: `w = weight.contiguous().to(device=device, dtype=torch.half)`,
//              quantize_4bit, `param.data = w_4bit`): the 16-bit weight, its fp16 copy, then the
//              4-bit data. The LM head is built first (model.py: lm_head before transformer).
//   load       load_checkpoint (lazy_load on the host, then load_state_dict, in the order of the
//              state dict: the LM head first); _quantize_on_load_hook quantises each Linear again
//              from an fp16 copy on the GPU while the 4-bit data it replaces is still alive.
// The 16-bit format is the model's half format, also under autocast (QLoRA's fp32 norms and
// embeddings are a cast after the load: peft's prepare_model_for_kbit_training); fp32 only when
// the whole model is fp32.

#include "core/memory/weight_load.hpp"

#include <algorithm>

#include "core/base/checked.hpp"
#include "core/memory/bnb_conversion.hpp"
#include "core/memory/step_events.hpp"
#include "core/memory/tensor_sizes.hpp"

namespace memplan {
namespace {

using replay::Builder;
using replay::Tensor;

// Each parameter tensor's shape and group (-1 before the layers, 0.. a layer, -2 after), in load
// order: the one walk over_parameters and the loaders share.
struct Placed {
  const TensorShape* shape = nullptr;  // none for the unnamed tensor over_parameters adds last
  int64_t group = -1;
};

std::vector<Placed> placed(const ParameterShapes& p) {
  std::vector<Placed> out;
  for (const TensorShape& t : p.before) out.push_back({&t, -1});
  for (uint64_t l = 0; l < p.dense_layers; ++l)
    for (const TensorShape& t : p.dense_layer) out.push_back({&t, static_cast<int64_t>(l)});
  for (uint64_t l = 0; l < p.layers; ++l)
    for (const TensorShape& t : p.layer) out.push_back({&t, static_cast<int64_t>(p.dense_layers + l)});
  for (const TensorShape& t : p.after) out.push_back({&t, -2});
  return out;
}

// The shape of each of over_parameters' `count` tensors.
std::vector<const TensorShape*> shapes_of(const ParameterShapes& p, size_t count) {
  std::vector<const TensorShape*> out;
  out.reserve(count);
  for (const Placed& t : placed(p)) out.push_back(t.shape);
  out.resize(count, nullptr);
  return out;
}

// Whether the loader quantises the tensor: a layer's nn.Linear weight (a matrix, not a fused
// experts' stack; under transformers not what its conversion leaves, bnb_conversion.hpp), and for
// Lit-GPT the LM head too.
bool quantised(WeightLoad how, const EstimateRequest& r, const Tensor& t, const TensorShape* s) {
  if (!s || s->cols == 0 || s->batch != 1) return false;
  if (how == WeightLoad::transformers_bnb && bnb_leaves(r, *s)) return false;
  if (t.group >= 0) return true;
  return how == WeightLoad::litgpt_bnb && t.group == -2;
}

uint64_t staging_bytes_per_element(const EstimateRequest& r) {
  return r.recipe.weights.cost.bytes() >= 4 && !r.recipe.autocast ? 4 : 2;
}

// transformers' warm-up block for a bitsandbytes 4-bit load (0: none in that release).
uint64_t warmup_bytes(const EstimateRequest& r, const std::vector<Tensor>& w,
                      const std::vector<const TensorShape*>& s, uint64_t per) {
  if (r.transformers.before(4, 51)) return 0;
  uint64_t bytes = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    const uint64_t n = s[i] ? s[i]->elements() : 0;
    uint64_t b = 0;
    if (r.transformers.before(5, 0))
      b = s[i] ? checked_mul(n, per, "load bytes") / 2 : w[i].bytes / 2;
    else if (quantised(WeightLoad::transformers_bnb, r, w[i], s[i]))
      b = (n + 1) / 2;
    else
      b = s[i] ? checked_mul(n, per, "load bytes") : w[i].bytes;
    bytes = checked_add(bytes, b, "load bytes");
  }
  return bytes;
}

// One 16-bit copy of a weight of `n` elements (the caller frees it once what needs it exists).
uint64_t staging(Builder& b, uint64_t n, uint64_t per) { return b.alloc(checked_mul(n, per, "load bytes")); }

void load_transformers(const EstimateRequest& r, std::vector<Tensor>& w,
                       const std::vector<const TensorShape*>& s, Builder& b) {
  const uint64_t per = staging_bytes_per_element(r);
  const uint64_t warm = warmup_bytes(r, w, s, per);
  if (warm) b.free(b.alloc(warm), warm);
  for (size_t i = 0; i < w.size(); ++i) {
    if (!quantised(WeightLoad::transformers_bnb, r, w[i], s[i])) {
      b.alloc(w[i]);
      continue;
    }
    const uint64_t n = s[i]->elements();
    const uint64_t copy = staging(b, n, per);
    b.alloc(w[i]);
    b.free(copy, n * per);
  }
}

// Lit-GPT's order: the LM head first, then the rest as registered.
std::vector<size_t> litgpt_order(const EstimateRequest& r, const std::vector<Tensor>& w,
                                 const std::vector<const TensorShape*>& s) {
  std::vector<size_t> order;
  for (size_t i = 0; i < w.size(); ++i)
    if (w[i].group == -2 && quantised(WeightLoad::litgpt_bnb, r, w[i], s[i])) order.push_back(i);
  for (size_t i = 0; i < w.size(); ++i)
    if (!(w[i].group == -2 && quantised(WeightLoad::litgpt_bnb, r, w[i], s[i]))) order.push_back(i);
  return order;
}

void load_litgpt(const EstimateRequest& r, std::vector<Tensor>& w, const std::vector<const TensorShape*>& s,
                 Builder& b) {
  const uint64_t per = staging_bytes_per_element(r);
  const std::vector<size_t> order = litgpt_order(r, w, s);
  for (const size_t i : order) {  // init: built on the GPU, quantised from an fp16 copy
    if (!quantised(WeightLoad::litgpt_bnb, r, w[i], s[i])) {
      b.alloc(w[i]);
      continue;
    }
    const uint64_t n = s[i]->elements();
    const uint64_t built = staging(b, n, per);
    const uint64_t half = staging(b, n, 2);
    b.alloc(w[i]);
    b.free(half, n * 2);
    b.free(built, n * per);
  }
  for (const size_t i : order) {  // load: quantised again from the checkpoint's fp16 copy
    if (!quantised(WeightLoad::litgpt_bnb, r, w[i], s[i])) continue;
    const uint64_t n = s[i]->elements();
    const uint64_t half = staging(b, n, 2);
    Tensor fresh = w[i];
    b.alloc(fresh);
    b.free(w[i]);
    w[i] = fresh;
    b.free(half, n * 2);
  }
}

}  // namespace

std::vector<Tensor> over_parameters(uint64_t total, const ParameterShapes& p, uint64_t count) {
  const std::vector<Placed> order = placed(p);
  std::vector<uint64_t> weights;
  weights.reserve(order.size());
  for (const Placed& t : order) weights.push_back(t.shape->elements());
  const Sized s = sized(total, weights, count, 0);
  std::vector<Tensor> out(s.bytes.size());
  for (size_t i = 0; i < s.bytes.size(); ++i)
    out[i] = {i < order.size() ? order[i].group : -1, s.bytes[i], 0,
              s.per_element ? s.bytes[i] / s.per_element : 0};
  return out;
}

WeightLoad weight_load(const EstimateRequest& r) {
  if (r.mode != Mode::train || !is_nf4(r.quantize) || r.device != Device::cuda) return WeightLoad::direct;
  return framework_profile(r.framework).weight_load.value.value_or(WeightLoad::direct);
}

void load_weights(const EstimateRequest& r, const ParameterShapes& shapes, std::vector<Tensor>& weights,
                  Builder& b) {
  const WeightLoad how = weight_load(r);
  if (how == WeightLoad::direct) {
    for (Tensor& t : weights) b.alloc(t);
    return;
  }
  const std::vector<const TensorShape*> s = shapes_of(shapes, weights.size());
  if (how == WeightLoad::transformers_bnb)
    load_transformers(r, weights, s, b);
  else
    load_litgpt(r, weights, s, b);
}

LoadPeak load_peak(const EstimateRequest& r, const Estimate& e) {
  LoadPeak p;
  const WeightLoad how = weight_load(r);
  if (how == WeightLoad::direct) return p;
  const ParameterShapes shapes = parameter_shapes(r.model);
  std::vector<Tensor> w = over_parameters(e.bytes(TermKind::parameters), shapes, r.model.parameters);
  const std::vector<const TensorShape*> s = shapes_of(shapes, w.size());
  p.staging_bytes_per_element = staging_bytes_per_element(r);
  for (size_t i = 0; i < w.size(); ++i)
    if (quantised(how, r, w[i], s[i])) p.staging_elements = std::max(p.staging_elements, s[i]->elements());
  if (how == WeightLoad::transformers_bnb) p.warmup = warmup_bytes(r, w, s, p.staging_bytes_per_element);
  Builder b;
  load_weights(r, shapes, w, b);
  p.bytes = requested_peak(b.events, 0);
  return p;
}

}  // namespace memplan
