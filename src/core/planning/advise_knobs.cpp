// The knob table of advise(): the playbook's changes as functions from a run to its settings.
#include "core/planning/advise_knobs.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

#include <memplan/error.hpp>
#include <memplan/optimizer.hpp>
#include <memplan/quantity.hpp>
#include <memplan/recipe.hpp>
#include <memplan/sharding.hpp>
#include "core/base/checked.hpp"
#include "core/parallel/sharded_estimate.hpp"
#include "core/planning/advise_knob_tensor_parallel.hpp"
#include "core/planning/advise_knobs_infer.hpp"
#include "core/planning/planning.hpp"

namespace memplan::advice {
namespace {

// The sequence knob shortens by at most this factor.
constexpr uint64_t k_shortest_sequence_divisor = 4;

int log2_floor(uint64_t n) {
  int k = 0;
  while (n > 1) {
    n >>= 1;
    ++k;
  }
  return k;
}

bool training(const Candidate& c) { return c.request.mode == Mode::train; }
// Placement knobs leave a run that is already spread over GPUs (by --gpus or the chain) alone.
bool placeable(const Candidate& c) { return training(c) && !c.request.parallel; }
bool transformer(const EstimateRequest& r) { return r.model.arch.has_value() && r.model.mlp_widths.empty(); }
bool adam(const Optimizer& o) {
  return o.kind == StateKind::copies && (o.name == "adam" || o.name == "adamw" || o.name == "adamw-hf");
}
// The DeepSpeed stage a strategy is; -1 for FSDP's (whose CPUOffload is another switch).
int zero_stage(ShardingStrategy s) {
  switch (s) {
    case ShardingStrategy::ddp:
    case ShardingStrategy::zero0:
      return 0;
    case ShardingStrategy::zero1:
      return 1;
    case ShardingStrategy::zero2:
      return 2;
    case ShardingStrategy::zero3:
      return 3;
    default:
      return -1;
  }
}
const char* half_name(const GpuSpec& g) { return g.bf16 ? "bf16" : "fp16"; }

AdviceChange change_of(AdviceKnob knob, int tier, int cost_rank) {
  AdviceChange ch;
  ch.knob = knob;
  ch.tier = tier;
  ch.cost_rank = cost_rank;
  return ch;
}

AdviceNote note_of(AdviceNoteCode code, uint64_t count = 0, uint64_t other = 0) {
  AdviceNote n;
  n.code = code;
  n.count = count;
  n.other = other;
  return n;
}

// --- tier 1: the run, not the model -------------------------------------------------------

// Largest micro-batch that fits, with the accumulation steps that keep the effective batch.
std::vector<Candidate> micro_batch(const Candidate& c, const KnobContext& ctx) {
  const EstimateRequest& r = c.request;
  if (r.batch < 2) return {};
  BatchPlan p;
  try {
    // The run's effective batch: r.batch on each data-parallel rank (max_batch divides it back).
    const uint64_t effective =
        r.mode == Mode::train ? checked_mul(r.batch, data_parallel_ranks(r), "batch") : 0;
    p = max_batch(r, ctx.memory, effective, r.batch);  // read only below r.batch
  } catch (const Error&) {
    return {};  // the estimate does not grow with the batch
  }
  if (p.max_micro_batch >= r.batch) return {};  // nothing to change
  EstimateRequest n = r;
  AdviceChange ch = change_of(AdviceKnob::micro_batch, 1, 10);
  ch.mode = r.mode;
  if (r.mode == Mode::infer) {
    n.batch = std::max<uint64_t>(p.micro_batch, 1);
    ch.batch = n.batch;
    return {with(c, n, ch)};
  }
  const uint64_t micro = p.micro_batch ? p.micro_batch : 1;
  const uint64_t steps = p.micro_batch ? p.accumulation_steps : r.batch;
  n.batch = micro;
  n.grad_accum = steps;  // the gradients stay allocated across the accumulated micro-batches
  ch.batch = micro;
  ch.steps = steps;
  ch.cost_rank = 10 + std::min(9, log2_floor(steps));
  ch.notes.push_back(note_of(AdviceNoteCode::accumulation_divides_loss, steps));
  if (micro * steps != r.batch)
    ch.notes.push_back(note_of(AdviceNoteCode::effective_batch_differs, micro * steps, r.batch));
  if (r.model.has_batchnorm) ch.notes.push_back(note_of(AdviceNoteCode::batchnorm_micro_batch));
  return {with(c, n, ch)};
}

// torch.autocast on an fp32 run: half activations, fp32 weights, gradients and optimizer state.
std::vector<Candidate> autocast(const Candidate& c, const KnobContext& ctx) {
  const Recipe& rc = c.request.recipe;
  if (!training(c) || rc.autocast || rc.has_master() || !(rc.weights.cost == ElementCost{4, 1}) ||
      !(rc.activations.cost == ElementCost{4, 1}))
    return {};
  EstimateRequest n = c.request;
  const std::string name = std::string("amp-") + half_name(ctx.gpu);
  n.recipe = parse_recipe(field_key(Field::precision), name);
  AdviceChange ch = change_of(AdviceKnob::autocast, 1, 20);
  ch.bf16 = ctx.gpu.bf16;
  ch.notes.push_back(note_of(AdviceNoteCode::autocast_forward_only));
  if (!ctx.gpu.bf16) {
    ch.cost_rank = 22;
    AdviceNote no_bf16 = note_of(AdviceNoteCode::no_bf16_hardware);
    no_bf16.gpu = ctx.gpu.id;
    ch.notes.push_back(std::move(no_bf16));
  }
  return {with(c, n, ch)};
}

// The longest sequence that fits at the chain's batch, down to a quarter of the one asked:
// shorter than that is a different task, not a shorter run.
std::vector<Candidate> sequence(const Candidate& c, const KnobContext& ctx) {
  const EstimateRequest& r = c.request;
  if (!transformer(r) || r.seq < 2) return {};
  bool capped = false;
  uint64_t seq = 0;
  const uint64_t floor = std::max<uint64_t>(1, r.seq / k_shortest_sequence_divisor);
  try {
    // Only a length within [floor, r.seq) is read exactly: below floor or at r.seq the side suffices.
    seq = max_seq(r, ctx.memory, capped, floor, r.seq);
  } catch (const Error&) {
    return {};
  }
  if (seq >= r.seq) return {};
  EstimateRequest n = r;
  n.seq = std::max(seq, floor);
  // Training: tier 2, after checkpointing: a shorter sequence changes what each sample holds (long samples
  // are truncated or split), where checkpointing changes only the compute. Inference: tier 1, the context
  // window asked for (vLLM's own first fix, --max-model-len).
  const int shorter = log2_floor(r.seq / n.seq);
  AdviceChange ch = r.mode == Mode::train ? change_of(AdviceKnob::sequence, 2, 44 + shorter)
                                          : change_of(AdviceKnob::sequence, 1, 30 + shorter);
  ch.mode = r.mode;
  ch.seq = n.seq;
  ch.was = r.seq;
  if (seq < floor) ch.notes.push_back(note_of(AdviceNoteCode::sequence_floor, floor, r.seq));
  return {with(c, n, ch)};
}

// --- tier 2: the computation or the model ---------------------------------------------------

std::vector<Candidate> checkpointing(const Candidate& c, const KnobContext&) {
  const EstimateRequest& r = c.request;
  if (!training(c) || !transformer(r) || r.checkpointing == Checkpointing::full) return {};
  std::vector<Candidate> out;
  if (r.checkpointing == Checkpointing::none) {
    EstimateRequest n = r;
    n.checkpointing = Checkpointing::selective;
    AdviceChange ch = change_of(AdviceKnob::checkpointing, 2, 40);
    ch.checkpointing = Checkpointing::selective;
    out.push_back(with(c, n, ch));
  }
  EstimateRequest n = r;
  n.checkpointing = Checkpointing::full;
  AdviceChange ch = change_of(AdviceKnob::checkpointing, 2, 42);
  ch.checkpointing = Checkpointing::full;
  ch.notes.push_back(note_of(AdviceNoteCode::checkpointing_how));
  out.push_back(with(c, n, ch));
  return out;
}

std::vector<Candidate> optimizer_8bit(const Candidate& c, const KnobContext&) {
  if (!training(c) || !adam(c.request.optimizer)) return {};
  EstimateRequest n = c.request;
  n.optimizer = parse_optimizer(field_key(Field::optimizer), "adamw-8bit");
  return {with(c, n, change_of(AdviceKnob::optimizer_8bit, 2, 50))};
}

std::vector<Candidate> adafactor(const Candidate& c, const KnobContext&) {
  if (!training(c) || !adam(c.request.optimizer)) return {};
  EstimateRequest n = c.request;
  n.optimizer = parse_optimizer(field_key(Field::optimizer), "adafactor");
  return {with(c, n, change_of(AdviceKnob::adafactor, 2, 52))};
}

// Trainable share and parameter count of the model with adapters added.
EstimateRequest with_adapters(const EstimateRequest& r, const LoraAdapters& a) {
  EstimateRequest n = r;
  n.model.parameters = checked_add(r.model.parameters, a.parameters, "parameters");
  n.trainable = static_cast<double>(a.parameters) / static_cast<double>(n.model.parameters);
  LoraTargets t;  // lora_adapters(model, rank): q and v
  t.rank = a.rank;
  t.q = t.v = true;
  n.lora = t;  // frozen base weights: the activations drop what only weight gradients needed
  return n;
}

bool lora_applies(const Candidate& c) {
  const EstimateRequest& r = c.request;
  return training(c) && transformer(r) && r.trainable >= 1.0 && !r.quantize;
}

// A LoRA or QLoRA change with the adapters' rank, targets and size.
AdviceChange lora_change(AdviceKnob knob, int cost_rank, const LoraAdapters& a, uint64_t base_parameters) {
  AdviceChange ch = change_of(knob, 2, cost_rank);
  ch.lora_rank = a.rank;
  ch.lora_parameters = a.parameters;
  ch.lora_share = static_cast<double>(a.parameters) / static_cast<double>(base_parameters);
  ch.lora_targets = lora_target_names(a);
  return ch;
}

std::vector<Candidate> lora(const Candidate& c, const KnobContext& ctx) {
  if (!lora_applies(c)) return {};
  const EstimateRequest& r = c.request;
  const LoraAdapters a = lora_adapters(r.model, ctx.options.lora_rank);
  EstimateRequest n = with_adapters(r, a);
  AdviceChange ch = lora_change(AdviceKnob::lora, 60, a, r.model.parameters);
  ch.bf16 = ctx.gpu.bf16;
  if (r.recipe.weights.cost.bytes() > 2.0) {  // frozen weights are loaded in half precision
    n.quantize = ctx.gpu.bf16 ? StorageFormatId::bf16 : StorageFormatId::fp16;
    ch.frozen_half = true;
  }
  AdviceNote peft = note_of(AdviceNoteCode::lora_peft, a.rank);
  peft.targets = ch.lora_targets;
  ch.notes.push_back(std::move(peft));
  return {with(c, n, ch)};
}

std::vector<Candidate> qlora(const Candidate& c, const KnobContext& ctx) {
  if (!lora_applies(c)) return {};
  const EstimateRequest& r = c.request;
  const LoraAdapters a = lora_adapters(r.model, ctx.options.lora_rank);
  EstimateRequest n = with_adapters(r, a);
  n.quantize = StorageFormatId::nf4;
  AdviceChange ch = lora_change(AdviceKnob::qlora, 64, a, r.model.parameters);
  ch.bf16 = ctx.gpu.bf16;
  const bool half =
      r.recipe.autocast || (r.recipe.weights.cost == ElementCost{2, 1} && !r.recipe.has_master());
  if (!half) {
    n.recipe = parse_recipe(field_key(Field::precision), half_name(ctx.gpu));
    ch.recipe = n.recipe.name;
  }
  if (n.recipe.loss_scaler) ch.notes.push_back(note_of(AdviceNoteCode::fp16_adapters_loss_scaling));
  return {with(c, n, ch)};
}

// --- placement: sharding over N GPUs, CPU offload (EstimateRequest::parallel) ----------------

std::vector<Candidate> sharding(const Candidate& c, const KnobContext& ctx) {
  if (!placeable(c)) return {};
  const uint64_t per_node = 8;
  std::optional<EstimateRequest> n =
      smallest_layout(c.request, ctx.memory, per_node, ctx.options.max_shard_gpus);
  const bool found = n.has_value();
  if (found && n->parallel->gpus < 2) return {};  // one GPU: nothing to shard
  if (!found) {                                   // the most it can do: ZeRO-3 over the largest count tried
    n = c.request;
    ParallelLayout l;
    l.gpus = ctx.options.max_shard_gpus;
    l.nodes = std::max<uint64_t>(1, l.gpus / per_node);
    l.sharding = ShardingStrategy::zero3;
    n->parallel = l;
  }
  const uint64_t gpus = n->parallel->gpus;
  AdviceChange ch = change_of(AdviceKnob::sharding, 2, 70 + std::min(9, log2_floor(gpus)));
  ch.found = found;
  ch.gpus = gpus;
  ch.gpu = ctx.gpu.id;
  ch.sharding = n->parallel->sharding;
  ch.notes.push_back(note_of(AdviceNoteCode::sharding_activations));
  return {with(c, *n, ch)};
}

// CPU offload (DeepSpeed ZeRO-Offload / ZeRO-Infinity): on one GPU, or on the data-parallel layout the
// run already has (--gpus N --zero 3 keeps its N GPUs and adds offload_optimizer / offload_param).
std::vector<Candidate> offload(const Candidate& c, const KnobContext&) {
  if (!training(c)) return {};
  const std::optional<ParallelLayout>& given = c.request.parallel;
  if (given &&
      (given->offload != Offload::none || given->tp > 1 || given->pp > 1 || zero_stage(given->sharding) < 0))
    return {};
  struct Setting {
    ShardingStrategy strategy;
    Offload what;
    int rank;
  };
  const Setting settings[] = {
      {ShardingStrategy::zero2, Offload::optimizer, 80},
      {ShardingStrategy::zero3, Offload::parameters, 82},
  };
  std::vector<Candidate> out;
  for (const Setting& st : settings) {
    EstimateRequest n = c.request;
    ParallelLayout l = given.value_or(ParallelLayout{});
    // Offloading the optimizer needs its state partitioned (stage 2 or more); parameters need stage 3.
    if (zero_stage(l.sharding) < zero_stage(st.strategy)) l.sharding = st.strategy;
    l.offload = st.what;
    n.parallel = l;
    EstimateRequest probe = n;
    probe.replay_below = 0;  // only the host bytes are read: no allocator replay
    const Estimate e = estimate(probe);
    const uint64_t host = e.sharded ? e.sharded->host_bytes_per_node : 0;
    AdviceChange ch = change_of(AdviceKnob::offload, 2, st.rank);
    ch.sharding = l.sharding;
    ch.offload = st.what;
    ch.gpus = l.gpus;
    ch.host_bytes = host;
    out.push_back(with(c, n, std::move(ch)));
  }
  return out;
}

}  // namespace

const std::vector<Knob>& knob_table() {
  static const std::vector<Knob> table = {
      {AdviceKnob::micro_batch, KnobGroup::batch, 1, Stage::solve, micro_batch},
      {AdviceKnob::autocast, KnobGroup::precision, 1, Stage::transform, autocast},
      {AdviceKnob::checkpointing, KnobGroup::checkpointing, 2, Stage::transform, checkpointing},
      {AdviceKnob::sequence, KnobGroup::sequence, 2, Stage::solve, sequence},
      {AdviceKnob::optimizer_8bit, KnobGroup::optimizer, 2, Stage::transform, optimizer_8bit},
      {AdviceKnob::adafactor, KnobGroup::optimizer, 2, Stage::transform, adafactor},
      {AdviceKnob::lora, KnobGroup::adapters, 2, Stage::transform, lora},
      {AdviceKnob::qlora, KnobGroup::adapters, 2, Stage::transform, qlora},
      {AdviceKnob::sharding, KnobGroup::placement, 2, Stage::place, sharding},
      {AdviceKnob::offload, KnobGroup::placement, 2, Stage::place, offload},
      {AdviceKnob::quantize, KnobGroup::precision, 2, Stage::transform, quantize_weights},
      {AdviceKnob::kv_quantize, KnobGroup::kv_cache, 1, Stage::transform, quantize_kv},
      {AdviceKnob::layer_offload, KnobGroup::placement, 2, Stage::place, layer_offload},
      {AdviceKnob::tensor_parallel, KnobGroup::placement, 2, Stage::place, tensor_parallel},
  };
  return table;
}

uint64_t required_bytes(const Candidate& c) { return estimate(c.request).required_bytes(); }

}  // namespace memplan::advice
