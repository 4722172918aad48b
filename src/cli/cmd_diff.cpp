// memplan diff OLD NEW: two runs compared for a code review. OLD and NEW are each an estimate or
// fit `--format json` output or a plan file (then estimated); the report says which terms and
// which GPUs' verdicts changed and by how much. Exit 1 when a GPU that fitted no longer does.
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/terminal_text.hpp"
#include "core/diagnose/plan_diff.hpp"

#include "cli/command.hpp"
#include "cli/diff_input.hpp"
#include "cli/text_table.hpp"

namespace memplan::cli {
namespace {

using nlohmann::json;

json opt_bytes(const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); }

// "+2.0 GiB (+100.0%)", "-512.0 MiB (-3.1%)", "unchanged"; a side that lacks it: "new", "gone".
std::string change_text(const BytesChange& c, Units units) {
  if (!c.old_bytes) return "new";
  if (!c.new_bytes) return "gone";
  const int64_t d = c.change_bytes();
  if (d == 0) return "unchanged";
  std::string s = (d > 0 ? "+" : "") + format_signed_bytes(d, units);
  if (*c.old_bytes > 0) {
    char pct[32];
    std::snprintf(pct, sizeof pct, " (%+.1f%%)",
                  100.0 * static_cast<double>(d) / static_cast<double>(*c.old_bytes));
    s += pct;
  }
  return s;
}

std::string bytes_or_dash(const std::optional<uint64_t>& v, Units units) {
  return v ? format_bytes(*v, units) : "-";
}

// "fits, 1.2 GiB spare" / "no, 3.4 GiB short" / "-" when the side does not name the GPU.
std::string gpu_state(const std::optional<DiffSide::Gpu>& g, Units units) {
  if (!g) return "-";
  const std::string amount = g->spare_bytes >= 0
                                 ? format_bytes(static_cast<uint64_t>(g->spare_bytes), units) + " spare"
                                 : format_signed_bytes(g->spare_bytes, units).substr(1) + " short";
  return std::string(verdict_name(g->verdict)) + ", " + amount;
}

std::string gpu_change(const GpuChange& g, Units units) {
  if (!g.old_gpu) return "new GPU";
  if (!g.new_gpu) return "not in NEW";
  BytesChange req{"required", g.old_gpu->required_bytes, g.new_gpu->required_bytes};
  std::string s = req.change_bytes() == 0 ? "required unchanged" : "required " + change_text(req, units);
  if (g.became_no_fit())
    s += "; no longer fits";
  else if (g.verdict_changed())
    s += std::string("; ") + verdict_name(g.old_gpu->verdict) + " -> " + verdict_name(g.new_gpu->verdict);
  return s;
}

std::string summary(const PlanDiff& d) {
  std::string broke, changed;
  for (const GpuChange& g : d.gpus) {
    if (g.became_no_fit())
      broke += (broke.empty() ? "" : ", ") + terminal_field(g.id);
    else if (g.old_gpu && g.new_gpu && g.verdict_changed())
      changed += (changed.empty() ? "" : ", ") + terminal_field(g.id) + " " +
                 verdict_name(g.old_gpu->verdict) + " -> " + verdict_name(g.new_gpu->verdict);
  }
  std::string s;
  if (!broke.empty()) s += "No longer fits: " + broke + ".";
  if (!changed.empty()) s += std::string(s.empty() ? "" : " ") + "Verdict changed: " + changed + ".";
  if (s.empty()) s = "No GPU's verdict changed.";
  return s;
}

std::string render_text(const PlanDiff& d, const DiffInput& a, const DiffInput& b, const OutputOptions& out) {
  const bool md = out.format == Format::markdown;
  using A = TextTable::Align;
  TextTable terms({{"term", A::left}, {"old", A::right}, {"new", A::right}, {"change", A::right}});
  for (const BytesChange* c : [&] {
         std::vector<const BytesChange*> rows;
         for (const BytesChange& t : d.terms) rows.push_back(&t);
         rows.push_back(&d.total);
         rows.push_back(&d.required);
         return rows;
       }())
    terms.add_row({terminal_field(c->name), bytes_or_dash(c->old_bytes, out.units),
                   bytes_or_dash(c->new_bytes, out.units), change_text(*c, out.units)});
  TextTable gpus({{"gpu", A::left}, {"old", A::left}, {"new", A::left}, {"change", A::left}});
  for (const GpuChange& g : d.gpus)
    gpus.add_row({terminal_field(g.id), gpu_state(g.old_gpu, out.units), gpu_state(g.new_gpu, out.units),
                  gpu_change(g, out.units)});

  std::string s;
  if (md) {
    s += "### memplan diff\n\n`" + terminal_field(a.path) + "` -> `" + terminal_field(b.path) + "`\n\n";
    s += (d.any_became_no_fit() ? "**" + summary(d) + "**" : summary(d)) + "\n\n";
    s += terms.render_markdown();
    if (!d.gpus.empty()) s += "\n" + gpus.render_markdown();
    s += "\nrequired = total + per-process overhead; sharded runs show the most-loaded GPU.\n";
    return s;
  }
  if (!out.quiet) s += "memplan diff: " + terminal_field(a.path) + " -> " + terminal_field(b.path) + "\n\n";
  s += terms.render();
  if (!d.gpus.empty()) s += "\n" + gpus.render();
  s += "\n" + summary(d) + "\n";
  return s;
}

json change_json(const BytesChange& c) {
  return {{"old_bytes", opt_bytes(c.old_bytes)},
          {"new_bytes", opt_bytes(c.new_bytes)},
          {"change_bytes", c.change_bytes()}};
}

json gpu_side_json(const std::optional<DiffSide::Gpu>& g) {
  if (!g) return nullptr;
  return {{"verdict", verdict_name(g->verdict)},
          {"memory_bytes", g->memory_bytes},
          {"required_bytes", g->required_bytes},
          {"spare_bytes", g->spare_bytes}};
}

std::string render_json(const PlanDiff& d, const DiffInput& a, const DiffInput& b) {
  json terms = json::array(), gpus = json::array(), broke = json::array();
  for (const BytesChange& t : d.terms) {
    json row = change_json(t);
    row["term"] = t.name;
    terms.push_back(row);
  }
  for (const GpuChange& g : d.gpus) {
    gpus.push_back({{"gpu", g.id},
                    {"old", gpu_side_json(g.old_gpu)},
                    {"new", gpu_side_json(g.new_gpu)},
                    {"verdict_changed", g.verdict_changed()},
                    {"became_no_fit", g.became_no_fit()}});
    if (g.became_no_fit()) broke.push_back(g.id);
  }
  const json doc = {{"schema", "memplan.diff/1"},
                    {"old", {{"path", a.path}, {"kind", a.kind}}},
                    {"new", {{"path", b.path}, {"kind", b.kind}}},
                    {"terms", terms},
                    {"total", change_json(d.total)},
                    {"required", change_json(d.required)},
                    {"gpus", gpus},
                    {"no_longer_fits", broke}};
  return doc.dump(2) + "\n";
}

}  // namespace

void add_diff(CLI::App& sub, Runner& run) {
  struct State {
    std::string old_path, new_path;
    RawOutputOptions output;
  };
  auto s = std::make_shared<State>();
  sub.add_option("OLD", s->old_path,
                 "The run before: an estimate or fit --format json output, or a plan file")
      ->required();
  sub.add_option("NEW", s->new_path, "The run after, the same kinds")->required();
  add_output_options(sub, s->output);
  run = [s](Io& io) {
    const OutputOptions out = resolve_output_options(s->output, io);
    if (out.format == Format::csv)
      throw Error("--format", "csv is not offered by diff (expected table, markdown or json)");
    const DiffInput a = read_diff_input(s->old_path, "OLD");
    const DiffInput b = read_diff_input(s->new_path, "NEW");
    const PlanDiff d = diff_plans(a.side, b.side);
    io.out << (out.format == Format::json ? render_json(d, a, b) : render_text(d, a, b, out));
    return d.any_became_no_fit() ? k_no_fit : k_ok;
  };
}

}  // namespace memplan::cli
