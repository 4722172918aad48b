// --gpus auto: the smallest GPU count, then the lightest sharding, whose most-loaded GPU fits.
#include <memplan/sharding.hpp>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"

namespace memplan {

namespace {

// The strategies to try at one GPU count, lightest first.
std::vector<ShardingStrategy> ladder(ShardingStrategy asked, bool vary) {
  using S = ShardingStrategy;
  if (!vary || asked == S::ddp) return {asked};
  if (is_fsdp(asked))
    return {S::fsdp_no_shard, S::fsdp_shard_grad_op, S::fsdp_hybrid_shard, S::fsdp_full_shard};
  return {S::zero0, S::zero1, S::zero2, S::zero3};
}

// A strategy that cannot run with this offload / pipeline is skipped, not an error.
bool compatible(ShardingStrategy s, const ParallelLayout& l) {
  const int level = sharding_level(s);
  if (is_fsdp(s)) return true;
  if (l.offload == Offload::optimizer && level == 0) return false;
  if (l.offload == Offload::parameters && level != 3) return false;
  if (l.pp > 1 && level >= 2) return false;
  return true;
}

}  // namespace

LayoutSearchResult search_layout(const ShardingRequest& request, const LayoutSearch& search,
                                 const std::function<bool(const ShardingResult&)>& fits) {
  if (search.gpus_per_node == 0) throw Error(Field::gpus_per_node, "must be at least 1");
  if (search.max_gpus == 0) throw Error(Field::max_gpus, "must be at least 1");
  const ParallelLayout& asked = request.layout;
  const uint64_t model_parallel = checked_mul(asked.tp ? asked.tp : 1, asked.pp ? asked.pp : 1, "tp x pp");
  LayoutSearchResult out;
  for (uint64_t gpus = model_parallel; gpus <= search.max_gpus; gpus += model_parallel) {
    // Beyond one node, only whole nodes.
    if (gpus > search.gpus_per_node && gpus % search.gpus_per_node != 0) continue;
    const uint64_t nodes = gpus > search.gpus_per_node ? gpus / search.gpus_per_node : 1;
    for (ShardingStrategy s : ladder(asked.sharding, search.vary_sharding)) {
      ShardingRequest r = request;
      r.layout.gpus = gpus;
      r.layout.nodes = nodes;
      r.layout.dp = 0;
      r.layout.sharding = s;
      if (!compatible(s, r.layout)) continue;
      ShardingResult result = estimate_sharded(r);  // layout errors (heads vs tp, ...) propagate
      ++out.layouts_tried;
      if (fits(result)) {
        out.found = true;
        out.result = std::move(result);
        return out;
      }
    }
  }
  return out;
}

LayoutSearchResult search_layout(const ShardingRequest& request, const LayoutSearch& search,
                                 uint64_t budget_bytes_per_gpu) {
  return search_layout(request, search, [budget_bytes_per_gpu](const ShardingResult& r) {
    return r.gpu.total <= budget_bytes_per_gpu;
  });
}

}  // namespace memplan
