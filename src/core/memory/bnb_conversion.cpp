// transformers' bitsandbytes conversion by release (bnb_conversion.hpp); checked with
// bench/frameworks/measure_load_warmup.py's meta models (transformers 5.24.0) and the 5.0.0, 5.4.0,
// 5.5.0 wheels' integrations/bitsandbytes.py.
#include "core/memory/bnb_conversion.hpp"

#include "core/base/checked.hpp"

namespace memplan {
namespace {

// A transformers-family framework quantising with bitsandbytes (the formats it converts to).
bool transformers_bnb(const EstimateRequest& r) {
  if (!r.quantize || r.mode != Mode::train) return false;
  const bool bnb = *r.quantize == StorageFormatId::nf4 || *r.quantize == StorageFormatId::nf4_dq ||
                   *r.quantize == StorageFormatId::int8;
  return bnb && runs_transformers_code(r.framework) && r.framework != Framework::torchtune;
}

}  // namespace

bool bnb_unconverted_layers(const EstimateRequest& r) {
  return transformers_bnb(r) && !r.transformers.before(5, 5) && r.model.arch &&
         r.model.arch->model_type == "falcon";
}

bool bnb_leaves(const EstimateRequest& r, const TensorShape& t) {
  if (!transformers_bnb(r) || !r.model.arch) return false;
  if (bnb_unconverted_layers(r)) return true;
  if (r.framework == Framework::unsloth || r.transformers.before(5, 0)) return false;
  const TransformerArch& a = *r.model.arch;
  // The fused stacks, and what has one row per expert: the router, gpt-oss's expert biases.
  return a.experts && (t.batch > 1 || t.rows == a.experts);
}

uint64_t bnb_unconverted_experts(const EstimateRequest& r) {
  if (!r.model.arch || !r.model.arch->experts) return 0;
  const ParameterShapes shapes = parameter_shapes(r.model);
  uint64_t per_layer = 0;
  for (const TensorShape& t : shapes.layer)
    if (bnb_leaves(r, t)) per_layer = checked_add(per_layer, t.elements(), "parameter count");
  return checked_mul(per_layer, shapes.layers, "parameter count");
}

}  // namespace memplan
