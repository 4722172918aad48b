// The sharding library's numbers in words: the layout line and its ranks table, the JSON
// "layout" object, and the --explain arithmetic of the most-loaded GPU.
#include "cli/render_sharding.hpp"

#include <fmt/format.h>

#include <memplan/quantity.hpp>

#include "cli/text_table.hpp"

namespace memplan::cli {
namespace {

using nlohmann::json;
using Align = TextTable::Align;

std::string g(uint64_t v) { return group_thousands(v); }

std::string per_param(ElementCost c) {
  if (c.den == 1) return std::to_string(c.num);
  return fmt::format("{:.4g}", c.bytes());
}

void explain_bytes(const ModelStateBytes& b, const ParallelLayout& l, uint64_t group,
                   std::vector<std::string>& ex) {
  const int level = sharding_level(l.sharding);
  ex.push_back(
      "bytes per parameter: weights " + per_param(b.weight) + " + gradients " + per_param(b.gradient) +
      (b.master_gradient.num ? " + fp32 gradient copy " + per_param(b.master_gradient) : std::string()) +
      " + master weights " + per_param(b.master_weight) + " + optimizer state " +
      per_param(b.optimizer_state));
  const bool paper = b.weight == ElementCost{2, 1} && b.gradient == ElementCost{2, 1} &&
                     b.master_gradient.num == 0 && b.master_weight == ElementCost{4, 1} &&
                     b.optimizer_state == ElementCost{8, 1};
  static const char* zero_formula[] = {"(2+2+K)Psi", "4Psi + K Psi/Nd", "2Psi + (2+K)Psi/Nd",
                                       "(2+2+K)Psi/Nd"};
  if (paper && !is_fsdp(l.sharding))
    ex.push_back(std::string("ZeRO paper (Rajbhandari et al., SC'20, Sec. 5.1), K = 12: stage ") +
                 std::to_string(level) + " = " + zero_formula[level] + " with Nd = " + g(group));
  if (l.sharding == ShardingStrategy::zero1) {
    const char* row = nullptr;
    if (b.weight == ElementCost{2, 1} && b.gradient == ElementCost{2, 1} &&
        b.master_gradient == ElementCost{4, 1})
      row = "float16 param, float16 grads: 4 + 16/d";
    else if (b.weight == ElementCost{2, 1} && b.gradient == ElementCost{4, 1} && b.master_gradient.num == 0)
      row = "bf16/float16 param, fp32 grads: 6 + 12/d";
    else if (b.weight == ElementCost{4, 1} && b.gradient == ElementCost{4, 1} && b.master_weight.num == 0)
      row = "fp32 param, fp32 grads: 8 + 8/d";
    if (row && b.optimizer_state == ElementCost{8, 1})
      ex.push_back(
          std::string("Megatron-LM distributed optimizer (docs/source/distrib_optimizer.md, Megatron "
                      "Core developer guide): ") +
          row + " bytes per parameter, d = " + g(group));
  }
  // Where this split is the one DeepSpeed's own estimator assumes, say so.
  const bool half_w = b.weight == ElementCost{2, 1} && b.master_weight == ElementCost{4, 1} &&
                      b.optimizer_state == ElementCost{8, 1};
  const bool fp32_grads = b.gradient == ElementCost{4, 1} && b.master_gradient.num == 0;
  const bool half_and_copy = b.gradient == ElementCost{2, 1} && b.master_gradient == ElementCost{4, 1};
  if (half_w && l.sharding == ShardingStrategy::zero3 && fp32_grads)
    ex.push_back(
        "same split as DeepSpeed estimate_zero3_model_states_mem_needs (stage3.py, PR #965 to "
        "current): 4L + 18P/N, + prefetched layers");
  if (half_w && l.sharding == ShardingStrategy::zero2 && half_and_copy)
    ex.push_back(
        "same split as DeepSpeed estimate_zero2_model_states_mem_needs, current formula "
        "(stage_1_and_2.py since PR #5099, April 2024): 2P + 18P/N");
  if (half_w && l.sharding == ShardingStrategy::zero1 && half_and_copy)
    ex.push_back("same split as DeepSpeed's documented ZeRO-2 estimate (memory.rst, PR #965): 4P + 16P/N");
}

// "1 GPU", "8 GPUs": `number` (n as written) and the noun, plural unless n is 1.
std::string counted(const std::string& number, uint64_t n, const char* noun) {
  return number + " " + noun + (n == 1 ? "" : "s");
}

}  // namespace

std::vector<std::string> sharding_explain(const ShardingResult& res) {
  const ParallelLayout& l = res.layout;
  const ShardingArithmetic& a = res.arithmetic;
  const ModelStateBytes& b = a.bytes;
  const RankLoad& t = res.heaviest();
  const uint64_t group = res.shard_group;
  std::vector<std::string> ex;
  ex.push_back("layout: " + counted(g(l.gpus), l.gpus, "GPU") + " = " + counted(g(l.nodes), l.nodes, "node") +
               " x " + g(res.gpus_per_node) + "; tp " + g(l.tp) + " x pp " + g(l.pp) + " x dp " + g(l.dp) +
               "; " + sharding_engine(l.sharding) +
               (sharding_level(l.sharding) ? " shards over " + g(group) + " ranks" : std::string()) +
               (l.offload != Offload::none ? "; offload " + offload_name(l.offload) : std::string()));
  explain_bytes(b, l, group, ex);
  if (l.tp > 1 || l.pp > 1)
    ex.push_back("Megatron split: " + g(a.layers_per_stage) + " layers per stage; vocabulary padded to " +
                 g(a.padded_vocab) + " (multiple of " + g(a.vocab_multiple) +
                 " x tp); embedding on the first stage, " + "output layer on the last; per tp rank " +
                 g(a.tp_rank_parameters) + " parameters over all stages");
  ex.push_back("most-loaded GPU: " + rank_kind_text(t, l) + ", " + g(t.model_parameters) +
               " parameters in its slice, " + g(a.trainable) + " trainable");
  ex.push_back("  parameters: " + g(a.weight_elements) + " x " + per_param(b.weight) + " B" +
               (l.offload == Offload::parameters ? " (offloaded)" : "") + " = " + g(t.gpu.parameters) + " B");
  ex.push_back("  gradients: " + g(a.gradient_elements) + " x " + per_param(b.gradient) + " B" +
               (b.master_gradient.num
                    ? " + " + g(a.state_elements) + " x " + per_param(b.master_gradient) + " B"
                    : std::string()) +
               " = " + g(t.gpu.gradients) + " B on the GPU" +
               (t.gpu.gradients == 0 && a.gradient_elements ? " (offloaded)" : ""));
  ex.push_back("  optimizer state: " + g(a.state_elements) + " x (" + per_param(b.master_weight) + " + " +
               per_param(b.optimizer_state) + ") B = " + g(t.gpu.optimizer_state) + " B on the GPU" +
               (l.offload != Offload::none ? " (offloaded)" : ""));
  if (a.gathered_bytes)
    ex.push_back("  gathered buffers: " + g(a.gathered_bytes) + " B (largest layer " +
                 g(a.largest_layer_parameters) + " parameters and its gradient in " + per_param(b.gathered) +
                 " B, x (1 + " + g(l.prefetch_layers) +
                 " prefetched); DeepSpeed docs: 4 x largest_layer_params)");
  if (a.unsharded_copy_bytes)
    ex.push_back("  unsharded low-precision parameters (FSDP): " + g(a.unsharded_copy_bytes) + " B");
  if (a.bucket_bytes)
    ex.push_back("  DDP gradient buckets: " + g(a.gradient_elements) + " x " + per_param(b.gradient) +
                 " B = " + g(a.bucket_bytes) +
                 " B (torch DDP copies every gradient into its Reducer's flat buckets of 25 MiB, "
                 "gradient_as_bucket_view=False)");
  if (l.tp > 1 || l.pp > 1)
    ex.push_back(
        "  activations (Korthikanti et al. 2022, Table 2; " +
        std::string(l.sequence_parallel ? "sequence parallel, " : "") + "recompute " +
        to_string(l.recompute) + "): per layer and micro-batch " + g(a.layer_activation) +
        " B (tp-replicated " + g(a.layer_replicated) + ", split " + g(a.layer_split) + ", s x s scores " +
        g(a.layer_scores) + "); x " + g(a.layers_per_chunk) + " layers per chunk x " + g(a.chunks_in_flight) +
        " chunk micro-batches in flight (1F1B" +
        (l.virtual_stages > 1 ? ", interleaved: L(1 + (p-1)/(pv)) on stage 0" : "") +
        "), + embedding dropout mask (first stage) and output layer 4sbh/t (1 + v/h) (last stage) = " +
        g(t.gpu.activations) + " B");
  else
    ex.push_back("  activations: " + g(t.gpu.activations) +
                 " B per GPU (data parallel: unchanged by sharding)");
  if (l.offload != Offload::none)
    ex.push_back("host per node: " + g(res.gpus_per_node) + " ranks x " + g(a.host_bytes_per_rank) +
                 " B = " + g(res.host_bytes_per_node) + " B offloaded, of which pinned " +
                 g(res.host_pinned_bytes_per_node) +
                 " B (parameters and gradients in transfer; DeepSpeed docs: 6 B/param with offload_param, "
                 "4 B without)");
  return ex;
}

json layout_json(const ShardingResult& res) {
  const ParallelLayout& l = res.layout;
  json ranks = json::array();
  for (const RankLoad& k : res.ranks)
    ranks.push_back({{"kind", rank_kind_text(k, l)},
                     {"count", k.count},
                     {"model_parameters", k.model_parameters},
                     {"parameters", k.gpu.parameters},
                     {"gradients", k.gpu.gradients},
                     {"optimizer_state", k.gpu.optimizer_state},
                     {"activations", k.gpu.activations},
                     {"buffers", k.gpu.buffers},
                     {"total_bytes", k.gpu.total},
                     {"host_bytes", k.host_bytes},
                     {"host_pinned_bytes", k.host_pinned_bytes}});
  return {{"gpus", l.gpus},
          {"nodes", l.nodes},
          {"gpus_per_node", res.gpus_per_node},
          {"sharding", sharding_name(l.sharding)},
          {"engine", sharding_engine(l.sharding)},
          {"offload", offload_name(l.offload)},
          {"tp", l.tp},
          {"pp", l.pp},
          {"dp", l.dp},
          {"sequence_parallel", l.sequence_parallel},
          {"virtual_stages", l.virtual_stages},
          {"shard_group", res.shard_group},
          {"most_loaded", rank_kind_text(res.heaviest(), l)},
          {"ranks", ranks}};
}

std::string ranks_text(const ShardingResult& res, const OutputOptions& o) {
  const ParallelLayout& l = res.layout;
  std::string out = "\n" + std::string(o.format == Format::markdown ? "" : "  ") +
                    "Layout: " + counted(std::to_string(l.gpus), l.gpus, "GPU") + " on " +
                    counted(std::to_string(l.nodes), l.nodes, "node") + ", " + sharding_engine(l.sharding) +
                    (l.offload == Offload::none ? "" : ", offload " + offload_name(l.offload)) + ", tp " +
                    std::to_string(l.tp) + " x pp " + std::to_string(l.pp) + " x dp " + std::to_string(l.dp) +
                    (l.sequence_parallel ? ", sequence parallel" : "") +
                    "; the breakdown is the most-loaded GPU (" + rank_kind_text(res.heaviest(), l) + ")\n";
  TextTable t({{"ranks", Align::left},
               {"count", Align::right},
               {"per GPU", Align::right},
               {"host (offload)", Align::right}});
  for (const RankLoad& k : res.ranks)
    t.add_row({rank_kind_text(k, l), std::to_string(k.count), format_bytes(k.gpu.total, o.units),
               format_bytes(k.host_bytes, o.units)});
  out += o.format == Format::markdown ? t.render_markdown() : t.render();
  if (res.host_bytes_per_node)
    out += "  host memory per node: " + format_bytes(res.host_bytes_per_node, o.units) + " (pinned " +
           format_bytes(res.host_pinned_bytes_per_node, o.units) + ")\n";
  return out;
}

std::string rank_kind_text(const RankLoad& k, const ParallelLayout& l) {
  switch (k.kind) {
    case RankKind::all:
      return "all ranks";
    case RankKind::first_stage:
      return "pipeline stage 0 (first)";
    case RankKind::middle_stages:
      return "pipeline stage 1 (heaviest of the middle stages 1-" + std::to_string(l.pp - 2) + ")";
    case RankKind::last_stage:
      return "pipeline stage " + std::to_string(l.pp - 1) + " (last)";
  }
  return "";
}

}  // namespace memplan::cli
