// memplan advise: when a run does not fit a GPU, the changes that make it fit, cheapest first
// (the lesson's playbook: tier 1 the run, tier 2 the computation or the model, tier 3 the
// hardware), each with its new required memory, its verdict and its cost; then the cheapest
// combinations that first fit. --checklist adds tier 0, the free fixes no estimate can see.
#include <algorithm>
#include <memory>
#include <optional>
#include <set>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/planning/advise.hpp"

#include "cli/command.hpp"
#include "cli/emit_choice.hpp"
#include "cli/emit_config.hpp"
#include "cli/plan_options.hpp"
#include "cli/render_advice.hpp"
#include "cli/render_fit.hpp"
#include "cli/text_table.hpp"
#include "cli/text_wrap.hpp"

namespace memplan::cli {
namespace {

using nlohmann::json;

constexpr uint64_t k_default_limit = 12;

json suggestion_json(const Suggestion& s, const std::vector<GpuSpec>& presets) {
  json knobs = json::array();
  for (const AdviceChange& c : s.changes) knobs.push_back(advice_knob_name(c.knob));
  return {{"tier", s.tier},
          {"change", suggestion_change(s)},
          {"required_bytes", s.required_bytes},
          {"verdict", verdict_name(s.verdict)},
          {"cost", suggestion_cost(s)},
          {"cost_rank", s.cost_rank},
          {"knobs", knobs},
          {"gpu", s.gpu},
          {"gpus", s.gpus},
          {"memory_bytes", s.memory_bytes},
          {"host_bytes", s.host_bytes},
          {"batch", s.request.batch},
          {"seq", s.request.seq},
          {"notes", suggestion_notes(s, presets)}};
}

std::vector<Suggestion> first(const std::vector<Suggestion>& v, uint64_t limit) {
  return {v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min<uint64_t>(limit, v.size()))};
}

std::string verdict_text(const Suggestion& s, const GpuSpec& gpu) {
  std::string v = verdict_name(s.verdict);
  if (s.gpus > 1)
    v += " (each of " + std::to_string(s.gpus) + ")";
  else if (s.gpu != gpu.id)
    v += " (" + s.gpu + ")";
  return v;
}

// Every text table fits this many columns.
constexpr size_t k_table_columns = 100;

// The text table: the change wrapped in the last column, its cost on the lines below it.
std::string wrapped_table_of(const std::vector<Suggestion>& list, const GpuSpec& gpu,
                             const OutputOptions& out) {
  using A = TextTable::Align;
  TextTable t(
      {{"tier", A::right}, {"required", A::right}, {"verdict", A::left}, {"change (cost below)", A::left}});
  size_t tier = 4, required = 8, verdict = 7;  // the headers' widths
  for (const Suggestion& s : list) {
    tier = std::max(tier, std::to_string(s.tier).size());
    required = std::max(required, format_bytes(s.required_bytes, out.units).size());
    verdict = std::max(verdict, verdict_text(s, gpu).size());
  }
  const size_t left = tier + required + verdict;
  const size_t indent = 2, gaps = 3 * 2;
  const size_t room =
      k_table_columns > indent + gaps + left + 30 ? k_table_columns - indent - gaps - left : 30;
  for (const Suggestion& s : list) {
    bool first_line = true;
    for (const std::string& line : wrap_words(suggestion_change(s), room)) {
      if (first_line)
        t.add_row(
            {std::to_string(s.tier), format_bytes(s.required_bytes, out.units), verdict_text(s, gpu), line});
      else
        t.add_row({"", "", "", line});
      first_line = false;
    }
    for (const std::string& line : wrap_words("cost: " + suggestion_cost(s), room - 2))
      t.add_row({"", "", "", "  " + line});
  }
  return t.render();
}

std::string table_of(const std::vector<Suggestion>& list, const GpuSpec& gpu, const OutputOptions& out) {
  using A = TextTable::Align;
  if (out.format != Format::markdown) return wrapped_table_of(list, gpu, out);
  TextTable t({{"tier", A::right},
               {"change", A::left},
               {"required", A::right},
               {"verdict", A::left},
               {"cost", A::left}});
  for (const Suggestion& s : list)
    t.add_row({std::to_string(s.tier), suggestion_change(s), format_bytes(s.required_bytes, out.units),
               verdict_text(s, gpu), suggestion_cost(s)});
  return out.format == Format::markdown ? t.render_markdown() : t.render();
}

std::string current_verdict(const Advice& a, const OutputOptions& out) {
  const std::string req = format_bytes(a.required_bytes, out.units),
                    mem = format_bytes(a.memory_bytes, out.units);
  if (!a.fits())
    return "required " + req + ", " + a.gpu.id + " offers " + mem + ": short by " +
           format_bytes(static_cast<uint64_t>(-a.spare_bytes), out.units) + " (verdict no)";
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.1f%%",
                100.0 * static_cast<double>(a.spare_bytes) / static_cast<double>(a.memory_bytes));
  return "fits: required " + req + " of " + mem + " on " + a.gpu.id + ", with " +
         format_bytes(static_cast<uint64_t>(a.spare_bytes), out.units) + " spare (" + pct + ")" +
         (a.verdict == Verdict::tight ? " - tight" : "");
}

std::string run_title(const EstimateRequest& r) {
  std::string t = r.model.name + ", " + r.recipe.name + ", " + r.optimizer.name + ", " +
                  (r.mode == Mode::train ? "training" : "inference") + ", batch " + group_thousands(r.batch);
  if (r.seq) t += " x seq " + group_thousands(r.seq);
  if (r.parallel)
    t += ", " + std::to_string(r.parallel->gpus) + " GPUs (" + sharding_name(r.parallel->sharding) + ")";
  return t;
}

}  // namespace

void add_advise(CLI::App& sub, Runner& run) {
  struct State {
    RawPlan plan;
    RawOutputOptions output;
    std::string limit;
    bool checklist = false;
    bool all = false;
    std::string emit, emit_rank;
    CLI::Option* emit_option = nullptr;
  };
  auto s = std::make_shared<State>();
  add_plan_options(sub, s->plan, PlanScope::torch_step);
  add_output_options(sub, s->output);
  sub.add_option("--limit", s->limit, "Suggestions to show in each list (default 12)");
  sub.add_flag("--checklist", s->checklist,
               "Also print tier 0: free fixes no estimate can see (retained graphs, no_grad, ...)");
  sub.add_flag("--all", s->all, "List the changes even when the run already fits");
  s->emit_option =
      sub.add_option("--emit", s->emit,
                     "Write the cheapest fitting suggestion as a config: deepspeed, axolotl, "
                     "llamafactory, torchtune, accelerate, trainer or flags (no value: --from's)")
          ->expected(0, 1);
  sub.add_option("--emit-rank", s->emit_rank, "With --emit: the Nth fitting suggestion, cheapest first");
  Runner body = [s](Io& io) {
    const OutputOptions out = resolve_output_options(s->output, io);
    const bool emit = s->emit_option->count() > 0;
    if (!emit && !s->emit_rank.empty()) throw Error("--emit-rank", "needs --emit FRAMEWORK");
    const std::optional<FromReport> from = emit ? read_from(s->plan) : std::nullopt;
    const EmitFramework framework =
        emit ? parse_emit_framework(s->emit, from ? &*from : nullptr) : EmitFramework::flags;
    const uint64_t emit_rank = parse_emit_rank(s->emit_rank);
    uint64_t limit = k_default_limit;
    if (!s->limit.empty()) {
      limit = parse_count("--limit", s->limit, 1ull << 20);
      if (limit == 0) throw Error("--limit", "\"" + s->limit + "\" must be at least 1");
    }
    const Plan plan = resolve_plan(s->plan);
    if (!plan.gpu_given) throw Error("--gpu", "required: the one GPU to advise for (e.g. --gpu rtx-4090)");
    if (plan.targets.asked_local && !plan.targets.device_notes.empty()) {  // as fit: no GPU readable
      for (const std::string& n : plan.targets.device_notes) io.err << "memplan: " << n << "\n";
      return k_no_device;
    }
    if (plan.targets.gpus.size() != 1) {
      std::string names;
      for (const GpuSpec& g : plan.targets.gpus) names += (names.empty() ? "" : ",") + g.id;
      if (plan.targets.gpus.empty())
        throw Error("--gpu", "no GPU could be read" + (plan.targets.device_notes.empty()
                                                           ? std::string()
                                                           : ": " + plan.targets.device_notes.front()));
      throw Error("--gpu", "advise needs exactly one GPU, got " + std::to_string(plan.targets.gpus.size()) +
                               " (" + names + ")");
    }
    const GpuSpec& gpu = plan.targets.gpus.front();
    const Advice a = advise(plan.request, gpu, plan.presets.gpus);
    std::optional<EmitRequest> emitting;
    std::optional<EmittedConfig> emitted;
    if (emit) {
      std::string why;
      emitting = advice_emit_request(a, plan.request, emit_rank, out.units, why);
      if (!emitting) {
        io.err << "memplan: --emit: " << why << "\n";
        return k_no_fit;
      }
      emitting->framework = framework;
      emitting->from = from ? &*from : nullptr;
      emitted = emit_config(*emitting);
      if (out.format != Format::json) {
        print_emitted(*emitted, *emitting, io);
        return k_ok;
      }
    }
    const bool show = !a.fits() || s->all;
    const std::vector<Suggestion> singles = show ? first(a.singles, limit) : std::vector<Suggestion>{};
    const std::vector<Suggestion> combos = first(a.combinations, limit);
    std::vector<std::string> notes;
    std::set<std::string> seen;
    for (const auto* list : {&singles, &combos})
      for (const Suggestion& sg : *list)
        if (sg.fits())
          for (const std::string& n : suggestion_notes(sg, plan.presets.gpus))
            if (seen.insert(n).second) notes.push_back(n);
    std::vector<std::string> hardware = fit_warning_texts(a.hardware_notes, gpu);
    if (gpu.budget_bytes && !gpu.budget_note.empty()) hardware.push_back(gpu.budget_note);

    if (out.format == Format::json) {
      json sj = json::array(), cj = json::array();
      for (const Suggestion& sg : singles) sj.push_back(suggestion_json(sg, plan.presets.gpus));
      for (const Suggestion& sg : combos) cj.push_back(suggestion_json(sg, plan.presets.gpus));
      json doc = {{"schema", "memplan.advise/1"},
                  {"inputs", plan.inputs},
                  {"gpu", {{"id", gpu.id}, {"name", gpu.name}, {"memory_bytes", a.memory_bytes}}},
                  {"required_bytes", a.required_bytes},
                  {"memory_bytes", a.memory_bytes},
                  {"spare_bytes", a.spare_bytes},
                  {"verdict", verdict_name(a.verdict)},
                  {"suggestions", sj},
                  {"combinations", cj},
                  {"search",
                   {{"candidates_tried", a.candidates_tried}, {"capped", a.search_capped}, {"max_knobs", 3}}},
                  {"notes", notes},
                  {"hardware_notes", hardware},
                  {"checklist", s->checklist ? json(tier0_checklist()) : json(nullptr)}};
      if (emitted) doc["emit"] = emitted_json(*emitted, *emitting);
      io.out << doc.dump(2) << "\n";
      return k_ok;
    }
    if (out.format == Format::csv) {
      CsvWriter csv;
      csv.row({"kind", "tier", "change", "required_bytes", "verdict", "cost", "gpu", "gpus"});
      for (const auto& [kind, list] : {std::pair{"single", &singles}, std::pair{"combination", &combos}})
        for (const Suggestion& sg : *list)
          csv.row({kind, std::to_string(sg.tier), suggestion_change(sg), std::to_string(sg.required_bytes),
                   verdict_name(sg.verdict), suggestion_cost(sg), sg.gpu, std::to_string(sg.gpus)});
      io.out << csv.str();
      return k_ok;
    }
    const bool md = out.format == Format::markdown;
    if (!out.quiet) io.out << "memplan advise: " << run_title(plan.request) << " on " << gpu.id << "\n\n";
    io.out << (md ? "" : "  ") << current_verdict(a, out) << "\n";
    if (s->checklist) {
      io.out << "\nTier 0: free, and no estimate can see it (check these first)\n";
      int i = 0;
      for (const std::string& c : tier0_checklist()) io.out << (md ? "" : "  ") << ++i << ". " << c << "\n";
    }
    if (show) {
      io.out << "\nChanges, cheapest first (tier 1: the run; tier 2: the computation or the model; tier 3: "
                "the GPU)\n";
      io.out << table_of(singles, gpu, out);
    }
    if (!combos.empty()) {
      io.out << "\nCombinations that first make it fit, cheapest first\n" << table_of(combos, gpu, out);
    } else if (!a.fits() && !out.quiet) {
      bool any_single = false;
      for (const Suggestion& sg : a.singles) any_single = any_single || (sg.fits() && sg.tier < 3);
      if (!any_single) io.out << "\nNo combination of up to 3 changes fits " << gpu.id << ".\n";
    }
    if (!out.quiet) {
      if (a.search_capped)
        io.out << "  note: the combination search stopped after " << a.candidates_tried << " candidates\n";
      // In the text format, notes wrap at the tables' width, continued under their text.
      auto line = [&](const std::string& label, const std::string& text) {
        if (out.format == Format::markdown) {
          io.out << "  " << label << text << "\n";
          return;
        }
        const std::string indent(2 + label.size(), ' ');
        bool first = true;
        for (const std::string& l : wrap_words(text, k_table_columns - indent.size())) {
          io.out << (first ? "  " + label : indent) << l << "\n";
          first = false;
        }
      };
      for (const std::string& n : notes) line("note: ", n);
      for (const std::string& h : hardware) line("hardware: ", h);
      if (show || !combos.empty())
        line("",
             "required includes " + format_bytes(a.request.overhead_bytes, out.units) +
                 (plan.request.overhead_given ? " per-process overhead (--overhead)"
                                              : " for " + gpu.id + "'s CUDA context (--overhead to set it)") +
                 "; sharding and offload rows are per GPU");
    }
    return k_ok;
  };
  // --emit alone on stdout (a config to redirect to a file), without the "inputs from" lines.
  Runner with_from = with_from_section(s->plan, s->output, body);
  run = [s, body, with_from](Io& io) {
    const bool bare =
        s->emit_option->count() > 0 && resolve_output_options(s->output, io).format != Format::json;
    return bare ? body(io) : with_from(io);
  };
}

}  // namespace memplan::cli
