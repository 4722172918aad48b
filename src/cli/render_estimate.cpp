#include "cli/render_estimate.hpp"

#include <memplan/quantity.hpp>

#include "cli/text_table.hpp"

namespace memplan::cli {
namespace {

using nlohmann::json;
using Align = TextTable::Align;

bool shown(const Estimate& e, const Term& t) {
  if (t.key == "kv_cache") return e.request.mode == Mode::infer || t.bytes;
  return true;
}

std::string verdict_cell(const FitRow& r, bool color) {
  std::string v = verdict_name(r.verdict);
  if (!r.warnings.empty() && !r.gpu.budget_bytes) v += " !";
  if (!color) return v;
  const char* c = r.verdict == Verdict::fits    ? "\033[32m"
                  : r.verdict == Verdict::tight ? "\033[33m"
                                                : "\033[31m";
  return c + v + "\033[0m";
}

std::string breakdown_table(const Estimate& e, const OutputOptions& o) {
  TextTable t({{"term", Align::left},
               {"bytes", Align::right},
               {"size", Align::right},
               {"format", Align::left},
               {"detail", Align::left}});
  for (const Term& term : e.terms) {
    if (!shown(e, term)) continue;
    if (term.key == "overhead")
      t.add_row({"Total", group_thousands(e.total_bytes()), format_bytes(e.total_bytes(), o.units), "", ""});
    t.add_row({term.label, group_thousands(term.bytes), format_bytes(term.bytes, o.units), term.format,
               term.detail});
  }
  t.add_row({"Required", group_thousands(e.required_bytes()), format_bytes(e.required_bytes(), o.units), "",
             "total + overhead"});
  return o.format == Format::markdown ? t.render_markdown() : t.render();
}

std::string explain_text(const Estimate& e, const OutputOptions& o) {
  std::string out = "\nArithmetic:\n";
  for (const Term& term : e.terms)
    for (const std::string& line : term.arithmetic) out += "  " + line + "\n";
  out += "  total = " + group_thousands(e.total_bytes()) +
         " B; required = total + overhead = " + group_thousands(e.required_bytes()) + " B (" +
         format_bytes(e.required_bytes(), o.units) + ")\n";
  if (!e.layer_ledger.empty()) {
    out += "\n" + e.ledger_title + "\n";
    TextTable t({{"saved tensor", Align::left},
                 {"shape", Align::left},
                 {"format", Align::left},
                 {"bytes", Align::right}});
    for (const LedgerRow& r : e.layer_ledger)
      t.add_row({r.name, r.shape, r.format, group_thousands(r.bytes)});
    out += o.format == Format::markdown ? t.render_markdown() : t.render();
  }
  return out;
}

std::string assumptions_text(const Estimate& e) {
  std::string out = "\nAssumptions:\n";
  for (const std::string& n : e.request.model.notes) out += "  - " + n + "\n";
  for (const std::string& a : e.assumptions) out += "  - " + a + "\n";
  return out;
}

json layout_json(const ShardingResult& res) {
  const ParallelLayout& l = res.layout;
  json ranks = json::array();
  for (const RankLoad& k : res.ranks)
    ranks.push_back({{"kind", k.kind},
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
          {"most_loaded", res.most_loaded},
          {"ranks", ranks}};
}

std::string ranks_text(const ShardingResult& res, const OutputOptions& o) {
  const ParallelLayout& l = res.layout;
  std::string out = "\n" + std::string(o.format == Format::markdown ? "" : "  ") +
                    "Layout: " + std::to_string(l.gpus) + " GPUs on " + std::to_string(l.nodes) +
                    " node(s), " + sharding_engine(l.sharding) +
                    (l.offload == Offload::none ? "" : ", offload " + offload_name(l.offload)) + ", tp " +
                    std::to_string(l.tp) + " x pp " + std::to_string(l.pp) + " x dp " + std::to_string(l.dp) +
                    (l.sequence_parallel ? ", sequence parallel" : "") +
                    "; the breakdown is the most-loaded GPU (" + res.most_loaded + ")\n";
  TextTable t({{"ranks", Align::left},
               {"count", Align::right},
               {"per GPU", Align::right},
               {"host (offload)", Align::right}});
  for (const RankLoad& k : res.ranks)
    t.add_row({k.kind, std::to_string(k.count), format_bytes(k.gpu.total, o.units),
               format_bytes(k.host_bytes, o.units)});
  out += o.format == Format::markdown ? t.render_markdown() : t.render();
  if (res.host_bytes_per_node)
    out += "  host memory per node: " + format_bytes(res.host_bytes_per_node, o.units) + " (pinned " +
           format_bytes(res.host_pinned_bytes_per_node, o.units) + ")\n";
  return out;
}

std::string csv(const Estimate& e, const std::vector<FitRow>& fit) {
  std::string out = "kind,name,bytes,memory_bytes,spare_bytes,verdict,format\n";
  for (const Term& t : e.terms)
    out += "term," + t.key + "," + std::to_string(t.bytes) + ",,,," + csv_field(t.format) + "\n";
  out += "total,total," + std::to_string(e.total_bytes()) + ",,,,\n";
  out += "total,required," + std::to_string(e.required_bytes()) + ",,,,\n";
  for (const FitRow& r : fit)
    out += "gpu," + csv_field(r.gpu.id) + "," + std::to_string(r.required_bytes) + "," +
           std::to_string(r.memory_bytes) + "," + std::to_string(r.spare_bytes) + "," +
           verdict_name(r.verdict) + ",\n";
  return out;
}

}  // namespace

std::string describe_model(const Estimate& e) {
  const EstimateRequest& r = e.request;
  std::string s = r.model.name.empty() ? r.model.id : r.model.name;
  s += " (" + group_thousands(r.model.parameters) + " parameters)";
  s += ", " + r.recipe.name;
  if (r.mode == Mode::train) {
    s += ", " + r.optimizer.name + ", training";
    if (r.trainable < 1.0) s += " " + group_thousands(e.trainable_parameters) + " of them";
    if (e.lora) s += " (LoRA r=" + std::to_string(e.lora->rank) + " adapters)";
  } else {
    s += ", inference";
  }
  if (r.quantize) s += ", weights " + storage_format(*r.quantize).name;
  if (r.activation_bytes_per_row || r.seq || !r.model.mlp_widths.empty())
    s += ", batch " + group_thousands(r.batch);
  if (r.seq) s += " x seq " + group_thousands(r.seq);
  return s;
}

json fit_row_json(const FitRow& r) {
  return {{"gpu", r.gpu.id},
          {"name", r.gpu.name},
          {"memory_bytes", r.memory_bytes},
          {"required_bytes", r.required_bytes},
          {"spare_bytes", r.spare_bytes},
          {"verdict", verdict_name(r.verdict)},
          {"warnings", r.warnings}};
}

json estimate_json(const Plan& plan, const Estimate& e, const std::vector<FitRow>& fit) {
  json breakdown = json::object();
  json formats = json::object();
  for (const Term& t : e.terms) {
    breakdown[t.key] = t.bytes;
    formats[t.key] = t.format;
  }
  json fits = json::array();
  for (const FitRow& r : fit) fits.push_back(fit_row_json(r));
  json explain = json::array();
  for (const Term& t : e.terms)
    for (const std::string& line : t.arithmetic) explain.push_back(line);
  json assumptions = e.request.model.notes;
  for (const std::string& a : e.assumptions) assumptions.push_back(a);
  json model = {{"id", e.request.model.id},
                {"name", e.request.model.name},
                {"parameters", e.request.model.parameters},
                {"trainable_parameters", e.trainable_parameters},
                {"tensors", e.request.model.tensors ? json(e.request.model.tensors) : json(nullptr)},
                {"source", e.request.model.source}};
  if (e.lora)  // the trainable parameters are the LoRA adapters
    model["lora"] = {{"rank", e.lora->rank},
                     {"targets", e.lora->targets},
                     {"matrices", e.lora->matrices},
                     {"parameters", e.lora->parameters}};
  json doc = {{"schema", "memplan.estimate/1"},
              {"inputs", plan.inputs},
              {"model", model},
              {"breakdown", breakdown},
              {"formats", formats},
              {"total_bytes", e.total_bytes()},
              {"required_bytes", e.required_bytes()},
              {"fit", fits},
              {"explain", explain},
              {"assumptions", assumptions}};
  if (!plan.targets.device_notes.empty()) doc["device_notes"] = plan.targets.device_notes;
  if (e.sharded) {
    doc["layout"] = layout_json(*e.sharded);
    doc["ranks"] = doc["layout"]["ranks"];
    doc["host_bytes"] = e.sharded->host_bytes_per_node;
    doc["host_pinned_bytes"] = e.sharded->host_pinned_bytes_per_node;
  }
  if (!e.layer_ledger.empty()) {
    json ledger = json::array();
    for (const LedgerRow& r : e.layer_ledger)
      ledger.push_back({{"name", r.name}, {"shape", r.shape}, {"format", r.format}, {"bytes", r.bytes}});
    doc["layer_ledger"] = ledger;
  }
  return doc;
}

std::string render_fit_table(const std::vector<FitRow>& fit, const std::vector<std::string>& device_notes,
                             const OutputOptions& o) {
  std::string out;
  if (!fit.empty()) {
    TextTable t({{"gpu", Align::left},
                 {"memory", Align::right},
                 {"required", Align::right},
                 {"spare", Align::right},
                 {"verdict", Align::left}});
    for (const FitRow& r : fit)
      t.add_row({r.gpu.id, format_bytes(r.memory_bytes, o.units), format_bytes(r.required_bytes, o.units),
                 format_signed_bytes(r.spare_bytes, o.units),
                 verdict_cell(r, o.color && o.format == Format::table)});
    out += o.format == Format::markdown ? t.render_markdown() : t.render();
  }
  std::string notes;
  for (const FitRow& r : fit)
    for (const std::string& w : r.warnings) notes += "  ! " + r.gpu.id + ": " + w + "\n";
  for (const std::string& n : device_notes) notes += "  ! " + n + "\n";
  if (!notes.empty()) out += notes;
  return out;
}

std::string render_estimate(const Plan& plan, const Estimate& e, const std::vector<FitRow>& fit,
                            const OutputOptions& o) {
  switch (o.format) {
    case Format::json:
      return estimate_json(plan, e, fit).dump(2) + "\n";
    case Format::csv:
      return csv(e, fit);
    case Format::table:
    case Format::markdown:
      break;
  }
  if (o.quiet) return format_bytes(e.required_bytes(), o.units) + "\n";
  const bool md = o.format == Format::markdown;
  std::string out = (md ? "**memplan estimate**: " : "memplan estimate: ") + describe_model(e) + "\n\n";
  out += breakdown_table(e, o);
  if (e.sharded) out += ranks_text(*e.sharded, o);
  out += "\n";
  std::string memory_note =
      "memory = what a process can allocate: NVML total minus the driver-reserved share where known";
  out += render_fit_table(fit, plan.targets.device_notes, o);
  if (!fit.empty())
    out += (md ? "\n" : "  ") + memory_note + "; overhead " + format_bytes(e.bytes("overhead"), o.units) +
           " for the CUDA context and workspaces (--overhead)\n";
  if (o.explain) {
    out += explain_text(e, o);
    out += assumptions_text(e);
  }
  return out;
}

}  // namespace memplan::cli
