// memplan sweep: throughput at several batch sizes on the user's hardware, and the bend.
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/quantity_kinds.hpp"
#include "core/trials/sweep.hpp"
#include "exec/process.hpp"

#include "cli/command.hpp"
#include "cli/commands_list.hpp"
#include "cli/text_table.hpp"
#include "cli/user_command.hpp"

namespace memplan::cli {
namespace {

constexpr const char* k_sweep_example =
    "memplan sweep --batches 16,32,64,128 -- python bench.py --batch {batch}";
constexpr int k_bar_width = 40;

struct SweepOptions {
  RawOutputOptions output;
  RawRunOptions run;
  std::string batches;
  std::string repeat = "1";
  std::string warmup = "1";
  std::string pattern;
  std::string rows = "{batch}";
  std::string steps = "1";
  std::string within = "10%";
};

std::vector<uint64_t> parse_batches(const std::string& text) {
  std::vector<uint64_t> out;
  size_t from = 0;
  while (from <= text.size()) {
    size_t comma = text.find(',', from);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(from, comma - from);
    if (item.empty())
      throw Error("--batches", "\"" + text + "\" has an empty item (expected e.g. 16,32,64 or auto)");
    const uint64_t b = parse_batch_size("--batches", item);
    if (b == 0) throw Error("--batches", "\"" + item + "\": a batch size must be at least 1");
    out.push_back(b);
    from = comma + 1;
  }
  return out;
}

unsigned parse_small(const char* subject, const std::string& text, uint64_t min) {
  const uint64_t v = parse_count(subject, text, 1000);
  if (v < min) throw Error(subject, "\"" + text + "\" must be at least " + std::to_string(min));
  return static_cast<unsigned>(v);
}

std::string rate_text(double v) { return v >= 100 ? fmt::format("{:.1f}", v) : fmt::format("{:.3g}", v); }

const char* end_name(SweepEnd e) {
  switch (e) {
    case SweepEnd::done:
      return "done";
    case SweepEnd::oom:
      return "oom";
    case SweepEnd::failed:
      return "failed";
    case SweepEnd::interrupted:
      return "interrupted";
  }
  return "?";
}

nlohmann::json to_json(const SweepResult& r, const TrialSettings& trial, const SweepSettings& s,
                       bool batches_auto, const std::vector<std::string>& plan,
                       const std::optional<Prediction>& pred) {
  using nlohmann::json;
  json points = json::array();
  for (const SweepPoint& p : r.points)
    points.push_back(
        {{"batch", p.batch},
         {"throughput", p.throughput ? json(*p.throughput) : json(nullptr)},
         {"oom", p.oom},
         {"predicted_bytes", pred && pred->bytes_at ? json(pred->bytes_at(p.batch)) : json(nullptr)},
         {"runs", p.runs},
         {"source", source_name(p.source)},
         {"seconds", p.seconds}});
  json failure = nullptr;
  if (r.failure)
    failure = {{"batch", r.failure->batch},
               {"exit_code", r.failure->exit_code},
               {"outcome", outcome_name(r.failure->outcome)},
               {"stderr_tail", r.failure->stderr_tail}};
  return {
      {"schema", "memplan.sweep/1"},
      {"inputs",
       {{"command", trial.command},
        {"batches", s.batches},
        {"batches_auto", batches_auto},
        {"repeat", s.repeat},
        {"warmup", s.warmup},
        {"throughput_pattern", s.throughput_pattern ? json(*s.throughput_pattern) : json(nullptr)},
        {"rows_per_step", s.rows_per_step},
        {"steps_per_run", s.steps_per_run},
        {"within", s.within},
        {"timeout_seconds",
         trial.timeout.count() ? json(std::chrono::duration<double>(trial.timeout).count()) : json(nullptr)},
        {"timeout_is_ok", trial.timeout_is_ok},
        {"plan_args", plan}}},
      {"points", points},
      {"bend", r.bend ? json(r.points[*r.bend].batch) : json(nullptr)},
      {"best_throughput", r.best ? json(*r.best) : json(nullptr)},
      {"end", end_name(r.end)},
      {"failure", failure}};
}

// The table with a bar chart beside it: one row per batch, the bend marked.
void print_chart(std::ostream& out, const SweepResult& r, const SweepSettings& s, const OutputOptions& o,
                 const std::optional<Prediction>& pred) {
  const bool with_pred = pred && pred->bytes_at;
  const auto paint = [&](const std::string& text, const char* code) {
    return o.color ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
  };
  out << fmt::format("{:>8}  {:>12}  {:>7}", "batch", "rows/s", "of best")
      << (with_pred ? fmt::format("  {:>10}", "predicted") : "") << "\n";
  for (size_t i = 0; i < r.points.size(); ++i) {
    const SweepPoint& p = r.points[i];
    const std::string predicted =
        with_pred ? fmt::format("  {:>10}", format_bytes(pred->bytes_at(p.batch), o.units)) : "";
    if (p.oom) {
      out << fmt::format("{:>8}  {:>12}  {:>7}", p.batch, "OOM", "") << predicted << "  "
          << paint("out of memory", "31") << "\n";
      continue;
    }
    if (!p.throughput || !r.best) {
      out << fmt::format("{:>8}  {:>12}  {:>7}", p.batch, "?", "") << predicted << "\n";
      continue;
    }
    const double share = *r.best > 0 ? *p.throughput / *r.best : 0;
    const int width = static_cast<int>(share * k_bar_width + 0.5);
    std::string row =
        fmt::format("{:>8}  {:>12}  {:>6.0f}%", p.batch,
                    rate_text(*p.throughput) + (p.source == ThroughputSource::wall_time ? "*" : ""),
                    share * 100) +
        predicted + "  " + paint(std::string(static_cast<size_t>(width), '#'), "36");
    if (r.bend && *r.bend == i) row += " " + paint("<- bend", "1;32");
    out << row << "\n";
  }
  out << "\n";
  if (r.bend) {
    const SweepPoint& b = r.points[*r.bend];
    uint64_t best_batch = b.batch;
    for (const SweepPoint& p : r.points)
      if (p.throughput && r.best && *p.throughput == *r.best) best_batch = p.batch;
    out << "bend: batch " << b.batch << " (" << rate_text(*b.throughput) << " rows/s, within "
        << fmt::format("{:g}", s.within * 100) << "% of the best, " << rate_text(*r.best)
        << " rows/s at batch " << best_batch << ")\n";
  } else {
    out << "bend: none (no batch gave a throughput)\n";
  }
  for (const SweepPoint& p : r.points)
    if (p.source == ThroughputSource::wall_time) {
      out << "* from wall time (rows per run / seconds): no throughput line in the output\n";
      break;
    }
}

void print_rows(std::ostream& out, const SweepResult& r, const OutputOptions& o,
                const std::optional<Prediction>& pred) {
  const bool with_pred = pred && pred->bytes_at;
  const bool csv = o.format == Format::csv;
  // One row of cells for either format: CSV through the one quoting rule, markdown as a table.
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"batch", csv ? "throughput" : "rows/s", "oom", "source", "bend"};
  if (with_pred) head.push_back(csv ? "predicted_bytes" : "predicted");
  for (size_t i = 0; i < r.points.size(); ++i) {
    const SweepPoint& p = r.points[i];
    const bool bend = r.bend && *r.bend == i;
    std::vector<std::string> cells = {std::to_string(p.batch),
                                      p.throughput ? fmt::format("{:.6g}", *p.throughput) : "",
                                      p.oom ? "true" : "false", source_name(p.source),
                                      bend ? (csv ? "true" : "bend") : (csv ? "false" : "")};
    if (with_pred)
      cells.push_back(csv ? std::to_string(pred->bytes_at(p.batch))
                          : format_bytes(pred->bytes_at(p.batch), o.units));
    rows.push_back(std::move(cells));
  }
  if (csv) {
    CsvWriter w;
    w.row(head);
    for (const auto& cells : rows) w.row(cells);
    out << w.str();
    return;
  }
  auto md_row = [&](const std::vector<std::string>& cells) {
    out << "|";
    for (const std::string& c : cells) out << " " << c << " |";
    out << "\n";
  };
  md_row(head);
  out << "|---:|---:|---|---|---|" << (with_pred ? "---:|" : "") << "\n";
  for (const auto& cells : rows) md_row(cells);
}

int run_sweep_command(CLI::App& sub, const SweepOptions& opt, Io& io) {
  const OutputOptions o = resolve_output_options(opt.output, io);
  const std::vector<std::string> plan = plan_args(sub);
  const bool batches_auto = opt.batches == "auto";
  if (opt.batches.empty()) throw Error("--batches", "is required (e.g. 16,32,64,128, or auto)");
  if (batches_auto && plan.empty())
    throw Error("--batches",
                "auto needs the estimate flags before --, e.g. --model gpt2 --seq 1024 --gpu local");
  const std::optional<Prediction> pred =
      prediction_for(plan, batches_auto ? "--batches auto" : "estimate flags");

  SweepSettings s;
  if (batches_auto) {
    s.batches = auto_batches(pred->max_batch);
    if (s.batches.empty()) throw Error("--batches auto", "the estimate says not even batch 1 fits");
  } else {
    s.batches = parse_batches(opt.batches);
  }
  s.repeat = parse_small("--repeat", opt.repeat, 1);
  s.warmup = parse_small("--warmup", opt.warmup, 0);
  if (!opt.pattern.empty()) s.throughput_pattern = opt.pattern;
  ThroughputParser{s.throughput_pattern};  // reports a bad pattern before anything runs
  s.rows_per_step = opt.rows;
  rows_per_step(s.rows_per_step, 1);
  s.steps_per_run = parse_count("--steps", opt.steps);
  if (s.steps_per_run == 0) throw Error("--steps", "must be at least 1");
  s.within = parse_fraction("--within", opt.within);
  if (s.within >= 1) throw Error("--within", "\"" + opt.within + "\" must be below 1 (100%)");
  const TrialSettings trial = resolve_run_options(opt.run, io, k_sweep_example);
  check_runnable(substitute_batch(trial.command, 1)[0]);

  PrintingObserver observer(io.err, o.quiet, !mentions_batch(trial.command));
  std::unique_ptr<ProcessRunner> runner = make_system_runner();
  SweepResult r;
  {
    InterruptScope interrupts;
    r = run_sweep(*runner, trial, s, &observer);
  }

  if (o.format == Format::json)
    io.out << to_json(r, trial, s, batches_auto, plan, pred).dump(2) << "\n";
  else if (o.format == Format::table && o.quiet) {
    if (r.bend) io.out << r.points[*r.bend].batch << "\n";
  } else if (o.format == Format::table)
    print_chart(io.out, r, s, o, pred);
  else
    print_rows(io.out, r, o, pred);

  if (r.end == SweepEnd::failed) {
    report_failure(io.err, *r.failure, trial);
    return k_command_failed;
  }
  if (r.end == SweepEnd::interrupted) {
    io.err << "memplan: interrupted by " << interrupt_name() << "\n";
    return interrupted_exit_code();
  }
  return r.best ? k_ok : k_no_fit;
}

}  // namespace

void add_sweep(CLI::App& sub, Runner& run) {
  auto opt = std::make_shared<SweepOptions>();
  sub.add_option("--batches", opt->batches,
                 "Batch sizes to measure (16,32,64,...), or auto (up to memplan's max-batch)");
  sub.add_option("--repeat", opt->repeat, "Measured runs per batch; the median counts (default 1)");
  sub.add_option("--warmup", opt->warmup, "Runs per batch before those, discarded (default 1)");
  sub.add_option(
      "--throughput-pattern", opt->pattern,
      "Regex for the throughput in the output; group 1 is rows/s (default: N rows/s, samples/s, it/s)");
  sub.add_option("--rows-per-step", opt->rows, "Rows per step: {batch} (default), 2048, {batch}*1024");
  sub.add_option("--steps", opt->steps, "Steps per run, for throughput from wall time (default 1)");
  sub.add_option("--within", opt->within,
                 "The bend: the smallest batch within this of the best (default 10%)");
  add_run_options(sub, opt->run);
  add_output_options(sub, opt->output);
  sub.footer(
      "Runs COMMAND (after --, no shell) once per batch with {batch} replaced; also sets MEMPLAN_BATCH.\n"
      "Stops at the first out-of-memory. Estimate flags before -- add predicted memory.\n"
      "Exit: 0 measured, 1 nothing measured, 2 bad input, 4 a failure that is not OOM, 130 Ctrl-C, 143 "
      "SIGTERM.\n"
      "Example: " +
      std::string(k_sweep_example));
  CLI::App* self = &sub;
  run = [self, opt](Io& io) { return run_sweep_command(*self, *opt, io); };
}

}  // namespace memplan::cli
