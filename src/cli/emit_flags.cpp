// --emit flags: the run as memplan's own plan flags, to give to estimate, fit or a later advise
// (beside --from FILE when the run came from one).
#include <memplan/sharding.hpp>
#include <memplan/storage_format.hpp>

#include "cli/emit_settings.hpp"
#include "cli/options.hpp"
#include "core/formats/llama_quant.hpp"

namespace memplan::cli {

EmitSettings flags_settings(const EstimateRequest& r, const FromReport*) {
  EmitSettings s;
  s.set(flag_for(Field::batch), r.batch);
  if (r.mode == Mode::train) s.set(flag_for(Field::grad_accum), r.grad_accum);
  if (r.seq) s.set(flag_for(Field::seq), r.seq);
  s.set(flag_for(Field::precision), r.recipe.name);
  if (r.mode == Mode::train) {
    s.set(flag_for(Field::optimizer), r.optimizer.name);
    s.set(flag_for(Field::checkpointing), to_string(r.checkpointing));
  }
  if (r.lora) {
    s.set(flag_for(Field::lora), r.lora->rank);
    std::string targets;
    for (const auto& [on, name] :
         {std::pair{r.lora->q, "q"}, std::pair{r.lora->k, "k"}, std::pair{r.lora->v, "v"},
          std::pair{r.lora->o, "o"}, std::pair{r.lora->gate, "gate"}, std::pair{r.lora->up, "up"},
          std::pair{r.lora->down, "down"}})
      if (on) targets += (targets.empty() ? "" : ",") + std::string(name);
    s.set(flag_for(Field::lora_targets), targets);
  }
  if (r.llama_ftype)
    s.set(flag_for(Field::quantize), llama_ftype(*r.llama_ftype)->name);
  else if (r.quantize)
    s.set(flag_for(Field::quantize), storage_format(*r.quantize).name);
  if (r.kv_format) s.set(flag_for(Field::kv_format), storage_format(*r.kv_format).name);
  if (r.parallel) {
    const ParallelLayout& l = *r.parallel;
    s.set(flag_for(Field::gpus), l.gpus);
    if (l.nodes > 1) s.set(flag_for(Field::nodes), l.nodes);
    using S = ShardingStrategy;
    const std::string name = sharding_name(l.sharding);  // "zero-3", "fsdp-full-shard", "ddp"
    if (name.rfind("zero-", 0) == 0)
      s.set(flag_for(Field::zero), std::stoi(name.substr(5)));
    else if (name.rfind("fsdp-", 0) == 0)
      s.set(flag_for(Field::fsdp), name.substr(5));
    else if (l.sharding != S::ddp)
      s.cannot.push_back("sharding " + name + ": no memplan flag writes it back");
    if (l.offload != Offload::none) s.set(flag_for(Field::offload), offload_name(l.offload));
    if (l.tp > 1) s.set(flag_for(Field::tp), l.tp);
    if (l.pp > 1) s.set(flag_for(Field::pp), l.pp);
  }
  return s;
}

}  // namespace memplan::cli
