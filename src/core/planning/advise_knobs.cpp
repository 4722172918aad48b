// The knob table of advise(): the playbook's changes as functions from a run to its settings.
#include "core/planning/advise_knobs.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include <memplan/error.hpp>
#include <memplan/optimizer.hpp>
#include <memplan/quantity.hpp>
#include <memplan/recipe.hpp>
#include <memplan/sharding.hpp>
#include "core/base/checked.hpp"
#include "core/parallel/sharded_estimate.hpp"
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

std::string percent(double share) { return fmt::format("{:.2f}%", 100.0 * share); }

Candidate with(const Candidate& c, EstimateRequest r, AdviceChange change) {
  Candidate out = c;
  out.request = std::move(r);
  out.changes.push_back(std::move(change));
  return out;
}

bool training(const Candidate& c) { return c.request.mode == Mode::train; }
// Placement knobs leave a run that is already spread over GPUs (by --gpus or the chain) alone.
bool placeable(const Candidate& c) { return training(c) && !c.request.parallel; }
bool transformer(const EstimateRequest& r) { return r.model.arch.has_value() && r.model.mlp_widths.empty(); }
bool adam(const Optimizer& o) {
  return o.kind == StateKind::copies && (o.name == "adam" || o.name == "adamw");
}
const char* half_name(const GpuSpec& g) { return g.bf16 ? "bf16" : "fp16"; }

// --- tier 1: the run, not the model -------------------------------------------------------

// Largest micro-batch that fits, with the accumulation steps that keep the effective batch.
std::vector<Candidate> micro_batch(const Candidate& c, const KnobContext& ctx) {
  const EstimateRequest& r = c.request;
  if (r.batch < 2) return {};
  BatchPlan p;
  try {
    p = max_batch(r, ctx.memory, r.mode == Mode::train ? r.batch : 0);
  } catch (const Error&) {
    return {};  // the estimate does not grow with the batch
  }
  if (p.max_micro_batch >= r.batch) return {};  // nothing to change
  EstimateRequest n = r;
  AdviceChange ch{"micro-batch", "", "", 1, 10, {}};
  if (r.mode == Mode::infer) {
    n.batch = std::max<uint64_t>(p.micro_batch, 1);
    ch.change = "batch " + group_thousands(n.batch);
    ch.cost = "more passes for the same requests";
    return {with(c, n, ch)};
  }
  const uint64_t micro = p.micro_batch ? p.micro_batch : 1;
  const uint64_t steps = p.micro_batch ? p.accumulation_steps : r.batch;
  n.batch = micro;
  ch.change = "micro-batch " + group_thousands(micro) + " x " + group_thousands(steps) +
              " accumulation steps (effective batch " + group_thousands(micro * steps) + ")";
  ch.cost = "x" + group_thousands(steps) + " accumulation steps: same effective batch, more steps";
  ch.cost_rank = 10 + std::min(9, log2_floor(steps));
  ch.notes.push_back("gradient accumulation: divide the loss by the " + group_thousands(steps) +
                     " steps (or the gradients come out " + group_thousands(steps) + "x too large)");
  if (micro * steps != r.batch)
    ch.notes.push_back("effective batch " + group_thousands(micro * steps) + " instead of " +
                       group_thousands(r.batch) + ": adjust the learning rate or the data loader");
  if (r.model.has_batchnorm)
    ch.notes.push_back(
        "the model has BatchNorm: its statistics see the micro-batch, so accumulation does not reproduce the "
        "large batch");
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
  AdviceChange ch{"autocast", "autocast " + name, "", 1, 20, {}};
  ch.notes.push_back("put torch.autocast around the forward pass, not around the training loop");
  if (ctx.gpu.bf16) {
    ch.cost = "none in memory: weights stay fp32; faster on tensor cores; not bit-for-bit repeatable";
  } else {
    ch.change += " with a GradScaler";
    ch.cost = "fp16 range: needs torch.amp.GradScaler (loss scaling); not bit-for-bit repeatable";
    ch.cost_rank = 22;
    ch.notes.push_back(ctx.gpu.id + " has no bf16 hardware: amp-fp16 with torch.amp.GradScaler");
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
  try {
    seq = max_seq(r, ctx.memory, capped);
  } catch (const Error&) {
    return {};
  }
  if (seq >= r.seq) return {};
  const uint64_t floor = std::max<uint64_t>(1, r.seq / k_shortest_sequence_divisor);
  EstimateRequest n = r;
  n.seq = std::max(seq, floor);
  AdviceChange ch{"sequence",
                  "sequence " + group_thousands(n.seq) + " (was " + group_thousands(r.seq) + ")",
                  r.mode == Mode::train ? "trains on shorter contexts: truncate or split long samples"
                                        : "a shorter context window",
                  1,
                  30 + log2_floor(r.seq / n.seq),
                  {}};
  if (seq < floor)
    ch.notes.push_back("sequence: even " + group_thousands(floor) + " tokens (a quarter of " +
                       group_thousands(r.seq) + ") do not fit; shorter is a different task");
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
    out.push_back(with(c, n,
                       {"checkpointing",
                        "checkpointing selective (recompute attention)",
                        "+a few % compute per step (the attention core is recomputed)",
                        2,
                        40,
                        {}}));
  }
  EstimateRequest n = r;
  n.checkpointing = Checkpointing::full;
  out.push_back(
      with(c, n,
           {"checkpointing",
            "checkpointing full (one input per layer)",
            "+~30% compute per step",
            2,
            42,
            {"gradient checkpointing: model.gradient_checkpointing_enable() or torch.utils.checkpoint"}}));
  return out;
}

std::vector<Candidate> optimizer_8bit(const Candidate& c, const KnobContext&) {
  if (!training(c) || !adam(c.request.optimizer)) return {};
  EstimateRequest n = c.request;
  n.optimizer = parse_optimizer(field_key(Field::optimizer), "adamw-8bit");
  return {with(c, n,
               {"optimizer-8bit",
                "optimizer adamw-8bit (bitsandbytes)",
                "lower quality risk: 8-bit optimizer state; bitsandbytes, NVIDIA only",
                2,
                50,
                {}})};
}

std::vector<Candidate> adafactor(const Candidate& c, const KnobContext&) {
  if (!training(c) || !adam(c.request.optimizer)) return {};
  EstimateRequest n = c.request;
  n.optimizer = parse_optimizer(field_key(Field::optimizer), "adafactor");
  return {with(c, n,
               {"adafactor",
                "optimizer adafactor (factored second moment)",
                "different convergence: factored statistics, no momentum; retune the learning rate",
                2,
                52,
                {}})};
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

std::string lora_text(const LoraAdapters& a, uint64_t base_parameters) {
  return "r=" + std::to_string(a.rank) + " on " + lora_target_names(a) + " (" +
         group_thousands(a.parameters) + " trainable, " +
         percent(static_cast<double>(a.parameters) / static_cast<double>(base_parameters)) + ")";
}

std::vector<Candidate> lora(const Candidate& c, const KnobContext& ctx) {
  if (!lora_applies(c)) return {};
  const EstimateRequest& r = c.request;
  const LoraAdapters a = lora_adapters(r.model, ctx.options.lora_rank);
  EstimateRequest n = with_adapters(r, a);
  AdviceChange ch{"lora", "LoRA " + lora_text(a, r.model.parameters), "", 2, 60, {}};
  ch.cost = "trains adapters only: may fall short of a full fine-tune";
  if (r.recipe.weights.cost.bytes() > 2.0) {  // frozen weights are loaded in half precision
    n.quantize = ctx.gpu.bf16 ? StorageFormatId::bf16 : StorageFormatId::fp16;
    ch.change += std::string(", frozen weights ") + half_name(ctx.gpu);
  }
  ch.notes.push_back("LoRA: peft LoraConfig(r=" + std::to_string(a.rank) + ", target_modules=[" +
                     lora_target_names(a) + "]); activations counted with frozen base weights");
  return {with(c, n, ch)};
}

std::vector<Candidate> qlora(const Candidate& c, const KnobContext& ctx) {
  if (!lora_applies(c)) return {};
  const EstimateRequest& r = c.request;
  const LoraAdapters a = lora_adapters(r.model, ctx.options.lora_rank);
  EstimateRequest n = with_adapters(r, a);
  n.quantize = StorageFormatId::nf4;
  AdviceChange ch{"qlora", "QLoRA " + lora_text(a, r.model.parameters) + ", frozen weights nf4", "", 2, 64,
                  {}};
  ch.cost =
      "4-bit frozen weights: small quality loss, slower matmuls (dequantisation); bitsandbytes, NVIDIA only";
  const bool half =
      r.recipe.autocast || (r.recipe.weights.cost == ElementCost{2, 1} && !r.recipe.has_master());
  if (!half) {
    n.recipe = parse_recipe(field_key(Field::precision), half_name(ctx.gpu));
    ch.change += ", " + n.recipe.name + " adapters";
  }
  if (n.recipe.loss_scaler) ch.notes.push_back("fp16 adapters need loss scaling (torch.amp.GradScaler)");
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
  AdviceChange ch{"sharding",
                  (found ? "" : "even ") + std::to_string(gpus) + " x " + ctx.gpu.id + " with " +
                      sharding_engine(n->parallel->sharding),
                  std::to_string(gpus) + "x the GPUs; gradient communication every step; effective batch x" +
                      std::to_string(gpus) + " at the same micro-batch",
                  2,
                  70 + std::min(9, log2_floor(gpus)),
                  {}};
  ch.notes.push_back("sharding: activations are not sharded; each GPU keeps its own micro-batch's");
  return {with(c, *n, ch)};
}

std::vector<Candidate> offload(const Candidate& c, const KnobContext&) {
  if (!placeable(c)) return {};
  struct Setting {
    ShardingStrategy strategy;
    Offload what;
    const char* text;
    int rank;
  };
  const Setting settings[] = {
      {ShardingStrategy::zero2, Offload::optimizer,
       "CPU offload of the optimizer (DeepSpeed ZeRO-Offload, 1 GPU)", 80},
      {ShardingStrategy::zero3, Offload::parameters,
       "CPU offload of parameters and optimizer (ZeRO-Infinity, 1 GPU)", 82},
  };
  std::vector<Candidate> out;
  for (const Setting& st : settings) {
    EstimateRequest n = c.request;
    ParallelLayout l;
    l.sharding = st.strategy;
    l.offload = st.what;
    n.parallel = l;
    const Estimate e = estimate(n);
    const uint64_t host = e.sharded ? e.sharded->host_bytes_per_node : 0;
    out.push_back(with(c, n,
                       {"offload",
                        st.text,
                        "slower steps: PCIe transfers and the optimizer step on the CPU; " +
                            format_bytes(host, Units::gib) + " of host memory",
                        2,
                        st.rank,
                        {}}));
  }
  return out;
}

}  // namespace

const std::vector<Knob>& knob_table() {
  static const std::vector<Knob> table = {
      {"micro-batch", "batch", 1, Stage::solve, micro_batch},
      {"autocast", "precision", 1, Stage::transform, autocast},
      {"sequence", "sequence", 1, Stage::solve, sequence},
      {"checkpointing", "checkpointing", 2, Stage::transform, checkpointing},
      {"optimizer-8bit", "optimizer", 2, Stage::transform, optimizer_8bit},
      {"adafactor", "optimizer", 2, Stage::transform, adafactor},
      {"lora", "adapters", 2, Stage::transform, lora},
      {"qlora", "adapters", 2, Stage::transform, qlora},
      {"sharding", "placement", 2, Stage::place, sharding},
      {"offload", "placement", 2, Stage::place, offload},
  };
  return table;
}

uint64_t required_bytes(const Candidate& c) { return estimate(c.request).required_bytes(); }

}  // namespace memplan::advice
