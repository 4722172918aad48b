#pragma once
// The estimate on several GPUs: the single-GPU terms split by a parallel layout (ZeRO, FSDP,
// tensor/pipeline parallel; see sharding.hpp), reported for the most-loaded GPU, and the search
// for the smallest layout of one GPU type that fits.

#include <cstdint>
#include <optional>

#include <memplan/estimate.hpp>
#include <memplan/sharding.hpp>

namespace memplan {

// The sharding library's request for `r`, from its single-GPU estimate `single`
// (bytes per parameter of each term from the recipe and optimizer, activations, step counters).
ShardingRequest sharding_request_for(const EstimateRequest& r, const Estimate& single);

// Largest module's parameters, for ZeRO-3/FSDP's gathered buffers: --largest-layer when given,
// else the larger of one transformer block and the embedding; 0 when unknown.
uint64_t largest_layer_parameters(const EstimateRequest& r);

// The smallest layout (GPU count, then the lowest ZeRO stage / lightest FSDP strategy) whose
// most-loaded GPU needs at most `memory` bytes with overhead; starts from r.parallel (or plain
// ZeRO up to stage 3). nullopt when nothing up to `max_gpus` fits.
std::optional<EstimateRequest> smallest_layout(const EstimateRequest& r, uint64_t memory,
                                               uint64_t gpus_per_node = 8, uint64_t max_gpus = 4096);

}  // namespace memplan
