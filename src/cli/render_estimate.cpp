#include "cli/render_estimate.hpp"

#include <memplan/quantity.hpp>
#include "core/memory/activation_term.hpp"

#include "cli/options.hpp"
#include "cli/render_cuda_context.hpp"
#include "cli/render_fit.hpp"
#include "cli/render_sharding.hpp"
#include "cli/render_terms.hpp"
#include "cli/render_timeline.hpp"
#include "cli/text_table.hpp"

namespace memplan::cli {
namespace {

// True when the estimate counted no activations for want of an architecture (--params alone).
bool uncounted_activations(const Estimate& e) {
  for (uint8_t i = 0; i < e.note_count; ++i)
    if (e.notes[i].code == NoteCode::activations_unknown) return true;
  return false;
}

using nlohmann::json;
using Align = TextTable::Align;

}  // namespace

bool no_sequence(const EstimateRequest& r) {
  return r.mode == Mode::train && r.model.arch && r.model.mlp_widths.empty() && r.seq == 0 &&
         r.activation_bytes_per_row == 0;
}

namespace {

bool shown(const Estimate& e, const Term& t) {
  if (!e.has(t.kind)) return false;
  if (t.kind == TermKind::kv_cache) return e.mode == Mode::infer || t.bytes;
  return true;
}

std::string ledger_title(const Estimate& e, const EstimateRequest& r) {
  if (e.ledger.mlp) return "Saved tensors of the MLP (batch " + group_thousands(r.batch) + ")";
  return "Saved tensors of one layer (batch " + group_thousands(r.batch) + " x seq " +
         group_thousands(r.seq) + ", " + to_string(r.attention) + " attention, checkpointing " +
         to_string(r.checkpointing) + ")";
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

// The overhead row's detail: on GPUs none of which runs CUDA it is not a CUDA context but the one
// memplan measured (on an H200) standing in for theirs.
std::string overhead_detail(const Estimate& e, const Term& term, const EstimateRequest& r,
                            const std::vector<FitRow>& fit) {
  if (r.overhead_given || fit.empty() || any_cuda(fit)) return term_detail(e, term, r);
  return "context assumed: no ROCm/HIP or Metal figure, the H200's CUDA one";
}

// The arithmetic lines, the overhead's worded for GPUs none of which runs CUDA.
std::vector<std::string> arithmetic_on(const Estimate& e, const EstimateRequest& r,
                                       const std::vector<FitRow>& fit) {
  std::vector<std::string> lines = arithmetic(e, r);
  if (r.overhead_given || fit.empty() || any_cuda(fit)) return lines;
  const std::string cuda = "the largest CUDA context predicted for the GPUs compared";
  for (std::string& line : lines)
    if (const size_t at = line.find(cuda); at != std::string::npos)
      line.replace(at, cuda.size(),
                   "no ROCm/HIP or Metal context measured: the H200's CUDA context stands in");
  return lines;
}

std::string breakdown_table(const Estimate& e, const EstimateRequest& r, const std::vector<FitRow>& fit,
                            const OutputOptions& o) {
  TextTable t({{"term", Align::left},
               {"bytes", Align::right},
               {"size", Align::right},
               {"format", Align::left},
               {"detail", Align::left}});
  for (const Term& term : e.terms) {
    if (!shown(e, term)) continue;
    if (term.kind == TermKind::overhead)
      t.add_row({"Total", group_thousands(e.total_bytes()), format_bytes(e.total_bytes(), o.units), "", ""});
    t.add_row({term_label(e, term), group_thousands(term.bytes), format_bytes(term.bytes, o.units),
               term_format(term, r),
               term.kind == TermKind::overhead ? overhead_detail(e, term, r, fit) : term_detail(e, term, r)});
  }
  if (e.timeline.present)
    t.add_row({"Peak", group_thousands(e.peak_bytes()), format_bytes(e.peak_bytes(), o.units), "",
               peak_detail(e.timeline)});
  if (e.timeline.reserved.present)
    t.add_row({"Reserved", group_thousands(e.reserved_bytes()), format_bytes(e.reserved_bytes(), o.units), "",
               "torch's caching allocator: peak + rounding + cached segments"});
  t.add_row({"Required", group_thousands(e.required_bytes()), format_bytes(e.required_bytes(), o.units), "",
             e.timeline.reserved.present ? "reserved + overhead"
             : e.timeline.present        ? "peak + overhead"
                                         : "total + overhead"});
  return o.format == Format::markdown ? t.render_markdown() : t.render();
}

std::string explain_text(const Estimate& e, const EstimateRequest& r, const LedgerDetail& ledger,
                         const std::vector<FitRow>& fit, const OutputOptions& o) {
  std::string out = "\nArithmetic:\n";
  for (const std::string& line : arithmetic_on(e, r, fit)) out += "  " + line + "\n";
  if (e.timeline.present)
    out += "  total = " + group_thousands(e.total_bytes()) +
           " B (every term at once); peak = " + group_thousands(e.peak_bytes()) + " B (" +
           to_string(e.timeline.peak_phase) + ")" +
           (e.timeline.reserved.present ? "; reserved = " + group_thousands(e.reserved_bytes()) +
                                              " B; required = reserved + overhead = "
                                        : std::string("; required = peak + overhead = ")) +
           group_thousands(e.required_bytes()) + " B (" + format_bytes(e.required_bytes(), o.units) + ")\n";
  else
    out += "  total = " + group_thousands(e.total_bytes()) +
           " B; required = total + overhead = " + group_thousands(e.required_bytes()) + " B (" +
           format_bytes(e.required_bytes(), o.units) + ")\n";
  out += timeline_text(e, o);
  if (!ledger.rows.empty()) {
    out += "\n" + ledger_title(e, r) + "\n";
    TextTable t({{"saved tensor", Align::left},
                 {"shape", Align::left},
                 {"format", Align::left},
                 {"bytes", Align::right}});
    for (const LedgerRow& row : ledger.rows)
      t.add_row({row.name, row.shape, row.format, group_thousands(row.bytes)});
    out += o.format == Format::markdown ? t.render_markdown() : t.render();
  }
  return out;
}

std::string assumptions_text(const Estimate& e, const EstimateRequest& r, const LedgerDetail& ledger) {
  std::string out = "\nAssumptions:\n";
  for (const std::string& a : assumptions(e, r, ledger)) out += "  - " + a + "\n";
  return out;
}

std::string csv(const Estimate& e, const EstimateRequest& r, const std::vector<FitRow>& fit) {
  CsvWriter w;
  w.row({"kind", "name", "bytes", "memory_bytes", "spare_bytes", "verdict", "format"});
  for (const Term& t : e.terms)
    if (e.has(t.kind))
      w.row({"term", term_key(t.kind), std::to_string(t.bytes), "", "", "", term_format(t, r)});
  w.row({"total", "total", std::to_string(e.total_bytes()), "", "", "", ""});
  if (e.timeline.present)
    w.row({"total", "peak", std::to_string(e.peak_bytes()), "", "", "", to_string(e.timeline.peak_phase)});
  if (e.timeline.reserved.present)
    w.row({"total", "reserved", std::to_string(e.reserved_bytes()), "", "", "", ""});
  w.row({"total", "required", std::to_string(e.required_bytes()), "", "", "", ""});
  for (const FitRow& f : fit)
    w.row({"gpu", f.gpu.id, std::to_string(f.required_bytes), std::to_string(f.memory_bytes),
           std::to_string(f.spare_bytes), verdict_name(f.verdict), ""});
  return w.str();
}

}  // namespace

std::string lora_arithmetic(const LoraAdapters& a) {
  auto terms = [&a](const LoraMatrix* m, uint8_t n) {
    std::string text;
    for (uint8_t i = 0; i < n; ++i)
      text += (text.empty() ? "" : " + ") +
              (m[i].count > 1 ? std::to_string(m[i].count) + " x " : std::string()) + std::to_string(a.rank) +
              " x (" + std::to_string(m[i].in) + " + " + std::to_string(m[i].out) + ")";
    return text;
  };
  std::string sum;
  if (a.attention_count)
    sum = std::to_string(a.attention_blocks) + " attention blocks x (" +
          terms(a.attention.data(), a.attention_count) + ")";
  if (a.mlp_count)
    sum += (sum.empty() ? "" : " + ") + std::to_string(a.mlp_blocks) + " MLP blocks x (" +
           terms(a.mlp.data(), a.mlp_count) + ")";
  return "LoRA adapters (r=" + std::to_string(a.rank) + " on " + lora_target_names(a) + ") = " + sum + " = " +
         group_thousands(a.parameters) + " trainable parameters";
}

std::string describe_model(const EstimateRequest& r, const Estimate& e) {
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

json fit_row_json(const FitRow& r, const std::optional<VerdictFix>& fix) {
  return {{"gpu", r.gpu.id},
          {"name", r.gpu.name},
          {"memory_bytes", r.memory_bytes},
          {"required_bytes", r.required_bytes},
          {"overhead_bytes", r.overhead_bytes},
          {"runtime", runtime_key(gpu_runtime(r.gpu))},
          {"cuda_context", cuda_context_json(r)},
          {"overhead_note", assumed_context_text(r).empty() ? json(nullptr) : json(assumed_context_text(r))},
          {"spare_bytes", r.spare_bytes},
          {"verdict", verdict_name(r.verdict)},
          {"cheapest_change", verdict_fix_json(fix)},
          {"warnings", fit_warning_texts(r.warnings, r.gpu)}};
}

json estimate_json(const Plan& plan, const Estimate& e, const std::vector<FitRow>& fit,
                   const std::vector<std::optional<VerdictFix>>& fixes) {
  const EstimateRequest& r = plan.request;
  const LedgerDetail ledger = activation_ledger_detail(r);
  json breakdown = json::object();
  json formats = json::object();
  for (const Term& t : e.terms) {
    if (!e.has(t.kind)) continue;
    breakdown[term_key(t.kind)] = t.bytes;
    formats[term_key(t.kind)] = term_format(t, r);
  }
  json fits = json::array();
  for (size_t i = 0; i < fit.size(); ++i)
    fits.push_back(fit_row_json(fit[i], i < fixes.size() ? fixes[i] : std::nullopt));
  json model = {{"id", r.model.id},
                {"name", r.model.name},
                {"parameters", r.model.parameters},
                {"trainable_parameters", e.trainable_parameters},
                {"tensors", r.model.tensors ? json(r.model.tensors) : json(nullptr)},
                {"source", r.model.source}};
  if (e.lora)  // the trainable parameters are the LoRA adapters
    model["lora"] = {{"rank", e.lora->rank},
                     {"targets", lora_target_names(*e.lora)},
                     {"matrices", e.lora->matrices},
                     {"parameters", e.lora->parameters}};
  json doc = {{"schema", "memplan.estimate/1"},
              {"inputs", plan.inputs},
              {"model", model},
              {"breakdown", breakdown},
              {"formats", formats},
              {"total_bytes", e.total_bytes()},
              {"peak_bytes", e.peak_bytes()},
              {"peak_phase", !e.timeline.present       ? json(nullptr)
                             : e.timeline.peak_at_load ? json("load")
                                                       : json(to_string(e.timeline.peak_phase))},
              {"reserved_bytes", e.reserved_bytes()},
              {"timeline", e.timeline.present ? timeline_json(e.timeline) : json(nullptr)},
              {"required_bytes", e.required_bytes()},
              {"overhead_source", r.overhead_given               ? "given"
                                  : fit.empty() || any_cuda(fit) ? "cuda_context"
                                                                 : "assumed"},
              {"reserved", reserved_json(e.timeline)},
              {"fit", fits},
              {"explain", arithmetic_on(e, r, fit)},
              {"assumptions", assumptions(e, r, ledger)}};
  if (e.timeline.load_peak_bytes)
    doc["load"] = {{"peak_bytes", e.timeline.load_peak_bytes},
                   {"staging_elements", e.timeline.load_transient.n[0]},
                   {"staging_bytes_per_element", e.timeline.load_transient.n[1]},
                   {"warmup_bytes", e.timeline.load_warmup_bytes}};
  if (const auto warnings = input_warnings(e); !warnings.empty()) doc["warnings"] = warnings;
  if (!plan.targets.device_notes.empty()) doc["device_notes"] = plan.targets.device_notes;
  if (e.sharded) {
    doc["layout"] = layout_json(*e.sharded);
    doc["ranks"] = doc["layout"]["ranks"];
    doc["host_bytes"] = e.sharded->host_bytes_per_node;
    doc["host_pinned_bytes"] = e.sharded->host_pinned_bytes_per_node;
  }
  if (!ledger.rows.empty()) {
    json rows = json::array();
    for (const LedgerRow& row : ledger.rows)
      rows.push_back(
          {{"name", row.name}, {"shape", row.shape}, {"format", row.format}, {"bytes", row.bytes}});
    doc["layer_ledger"] = rows;
  }
  return doc;
}

std::string render_fit_table(const std::vector<FitRow>& fit, const std::vector<std::string>& device_notes,
                             const OutputOptions& o) {
  std::string out;
  if (!fit.empty()) {
    TextTable t({{"gpu", Align::left},
                 {"memory", Align::right},
                 {"overhead", Align::right},
                 {"required", Align::right},
                 {"spare", Align::right},
                 {"verdict", Align::left}});
    for (const FitRow& r : fit)
      t.add_row({r.gpu.id, format_bytes(r.memory_bytes, o.units), format_bytes(r.overhead_bytes, o.units),
                 format_bytes(r.required_bytes, o.units), format_signed_bytes(r.spare_bytes, o.units),
                 verdict_cell(r, o.color && o.format == Format::table)});
    out += o.format == Format::markdown ? t.render_markdown() : t.render();
  }
  std::string notes;
  for (const FitRow& r : fit)
    for (const std::string& w : fit_warning_texts(r.warnings, r.gpu))
      notes += "  ! " + r.gpu.id + ": " + w + "\n";
  for (const std::string& n : device_notes) notes += "  ! " + n + "\n";
  if (!notes.empty()) out += notes;
  return out;
}

std::string render_estimate(const Plan& plan, const Estimate& e, const std::vector<FitRow>& fit,
                            const OutputOptions& o, const std::string& bars,
                            const std::vector<std::optional<VerdictFix>>& fixes) {
  const EstimateRequest& r = plan.request;
  switch (o.format) {
    case Format::json:
      return estimate_json(plan, e, fit, fixes).dump(2) + "\n";
    case Format::csv:
      return csv(e, r, fit);
    case Format::table:
    case Format::markdown:
      break;
  }
  if (o.quiet) return format_bytes(e.required_bytes(), o.units) + "\n";
  const bool md = o.format == Format::markdown;
  std::string out = (md ? "**memplan estimate**: " : "memplan estimate: ") + describe_model(r, e) + "\n\n";
  out += breakdown_table(e, r, fit, o);
  if (e.sharded) out += ranks_text(*e.sharded, o);
  // Inference over several GPUs: the split the breakdown is one GPU of (--gpus alone takes tp).
  if (!e.sharded && r.mode == Mode::infer && r.parallel && r.parallel->tp * r.parallel->pp > 1)
    out += "\n" + std::string(md ? "" : "  ") + "Layout: " + std::to_string(r.parallel->tp * r.parallel->pp) +
           " GPUs, tensor parallel " + std::to_string(r.parallel->tp) + " x pipeline " +
           std::to_string(r.parallel->pp) + " (vLLM --tensor-parallel-size " +
           std::to_string(r.parallel->tp) + " --pipeline-parallel-size " + std::to_string(r.parallel->pp) +
           "); the breakdown is the most-loaded GPU\n";
  out += "\n";
  std::string memory_note =
      "memory = what a process can allocate: NVML total minus the driver-reserved share where known";
  out += render_fit_table(fit, plan.targets.device_notes, o);
  out += verdict_fix_lines(fit, fixes, o.units, md);
  if (!fit.empty())
    out += (md ? "\n" : "  ") + memory_note +
           (r.overhead_given
                ? "; overhead " + format_bytes(e.bytes(TermKind::overhead), o.units) + " (--overhead)\n"
            : any_cuda(fit) ? "; overhead = the CUDA context predicted for each " +
                                  std::string(all_cuda(fit) ? "GPU (" : "CUDA GPU (") +
                                  cuda_runtime_text(r.cuda) + "; --overhead to set one figure)\n"
                            : "; --overhead to set the overhead\n");
  for (const FitRow& row : fit)  // a ROCm or Metal GPU: what its overhead is instead
    if (const std::string a = assumed_context_text(row); !a.empty())
      out += (md ? "\n" : "  ") + std::string("overhead on ") + row.gpu.id + ": " + a + "\n";
  for (const std::string& w : input_warnings(e))  // --explain lists them among the assumptions too
    out += (md ? "\n" : "  ") + std::string("note: ") + w + "\n";
  if (!o.explain && (r.batch > 1 || r.seq) && uncounted_activations(e))  // --explain lists it anyway
    out += (md ? "\n" : "  ") +
           std::string("note: --batch and --seq change nothing here: no activations are ") +
           "counted without an architecture (give --activation-bytes-per-row, --mlp, --model or --layers, " +
           "--hidden, --heads)\n";
  if (no_sequence(r))
    out += (md ? "\n" : "  ") + std::string("note: activations are not counted: no --seq given (") +
           "the tokens per sample a transformer keeps activations for); give --seq N for a training run\n";
  if (!bars.empty()) out += "\n" + bars;
  if (o.explain) {
    const LedgerDetail ledger = activation_ledger_detail(r);
    out += explain_text(e, r, ledger, fit, o);
    out += cuda_context_text(fit, r);
    out += assumptions_text(e, r, ledger);
  }
  return out;
}

}  // namespace memplan::cli
