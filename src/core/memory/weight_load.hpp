#pragma once
// How the weights reach the GPU before the first step (the allocator replay's step 0), tensor by
// tensor, with the loader's own temporaries (framework_profile.hpp's WeightLoad). A QLoRA load
// makes each weight in 16 bits on the GPU and quantises it there; what the allocator caches from
// that stays reserved through training (transformers' warm-up segment, the freed staging blocks).

#include <cstdint>
#include <vector>

#include <memplan/estimate.hpp>
#include <memplan/framework_profile.hpp>
#include <memplan/request.hpp>

#include "core/memory/parameter_tensors.hpp"
#include "core/memory/step_event_builder.hpp"

namespace memplan {

// `total` bytes for `count` parameters over the parameter tensors (load order), each tagged with
// its group; the parameters the shapes do not name, one more tensor, last.
std::vector<replay::Tensor> over_parameters(uint64_t total, const ParameterShapes& p, uint64_t count);

// The loader in force: the framework profile's for a training step on bitsandbytes NF4 weights
// (torchtune's torchao NF4 is not modelled: direct), else direct.
WeightLoad weight_load(const EstimateRequest& r);

// Allocates `weights` (over_parameters' tensors of `shapes`; their ids set) into `b` as the loader
// does, its temporaries made and freed around them.
void load_weights(const EstimateRequest& r, const ParameterShapes& shapes,
                  std::vector<replay::Tensor>& weights, replay::Builder& b);

// The load's high point: the most requested bytes alive at once while loading, the largest
// 16-bit staging copy of one weight (its elements, and bytes per element) and transformers'
// warm-up block. All 0 for a direct load (its high point is the weights themselves).
struct LoadPeak {
  uint64_t bytes = 0;
  uint64_t staging_elements = 0;
  uint64_t staging_bytes_per_element = 0;
  uint64_t warmup = 0;
};
LoadPeak load_peak(const EstimateRequest& r, const Estimate& e);

}  // namespace memplan
