// memplan ladder: run the user's real training command, halving the batch on out-of-memory.
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/quantity_kinds.hpp"
#include "core/trials/ladder.hpp"
#include "exec/process.hpp"

#include "cli/command.hpp"
#include "cli/commands_list.hpp"
#include "cli/text_table.hpp"
#include "cli/user_command.hpp"

namespace memplan::cli {
namespace {

constexpr const char* k_example = "memplan ladder --start 1024 -- python train.py --batch-size {batch}";

struct LadderOptions {
  RawOutputOptions output;
  RawRunOptions run;
  std::string start;
  std::string min = "1";
  bool refine = false;
  std::string step = "1";
};

const char* end_name(LadderEnd end) {
  switch (end) {
    case LadderEnd::found:
      return "found";
    case LadderEnd::none_fit:
      return "none_fit";
    case LadderEnd::failed:
      return "failed";
    case LadderEnd::interrupted:
      return "interrupted";
  }
  return "?";
}

std::string seconds_text(double s) { return fmt::format("{:.1f}", s); }

std::string predicted_text(const std::optional<Prediction>& p, uint64_t batch, Units units) {
  return p && p->bytes_at ? format_bytes(p->bytes_at(batch), units) : "-";
}

nlohmann::json to_json(const LadderResult& r, const TrialSettings& trial, const LadderSettings& ladder,
                       bool start_auto, const std::vector<std::string>& plan,
                       const std::optional<Prediction>& pred) {
  using nlohmann::json;
  json tries = json::array();
  for (const Trial& t : r.tries)
    tries.push_back(
        {{"batch", t.batch},
         {"exit_code", t.exit_code},
         {"oom", t.oom()},
         {"seconds", t.seconds},
         {"outcome", outcome_name(t.outcome)},
         {"signal", t.signal ? json(t.signal) : json(nullptr)},
         {"timed_out", t.timed_out},
         {"predicted_bytes", pred && pred->bytes_at ? json(pred->bytes_at(t.batch)) : json(nullptr)}});
  json failure = nullptr;
  if (r.end == LadderEnd::failed && !r.tries.empty()) {
    const Trial& t = r.tries.back();
    failure = {{"batch", t.batch},
               {"exit_code", t.exit_code},
               {"outcome", outcome_name(t.outcome)},
               {"stderr_tail", t.stderr_tail}};
  }
  return {
      {"schema", "memplan.ladder/1"},
      {"inputs",
       {{"command", trial.command},
        {"start", ladder.start},
        {"start_auto", start_auto},
        {"min", ladder.min},
        {"refine", ladder.refine},
        {"step", ladder.step},
        {"timeout_seconds",
         trial.timeout.count() ? json(std::chrono::duration<double>(trial.timeout).count()) : json(nullptr)},
        {"timeout_is_ok", trial.timeout_is_ok},
        {"plan_args", plan}}},
      {"tries", tries},
      {"largest_ok", r.largest_ok ? json(*r.largest_ok) : json(nullptr)},
      {"smallest_oom", r.smallest_oom ? json(*r.smallest_oom) : json(nullptr)},
      {"end", end_name(r.end)},
      {"failure", failure}};
}

void print_rows(std::ostream& out, const LadderResult& r, const OutputOptions& o,
                const std::optional<Prediction>& pred) {
  const bool with_pred = pred && pred->bytes_at;
  if (o.format == Format::csv) {
    CsvWriter csv;
    std::vector<std::string> head = {"batch", "outcome", "exit_code", "oom", "seconds"};
    if (with_pred) head.push_back("predicted_bytes");
    csv.row(head);
    for (const Trial& t : r.tries) {
      std::vector<std::string> cells = {std::to_string(t.batch), outcome_name(t.outcome),
                                        std::to_string(t.exit_code), t.oom() ? "true" : "false",
                                        fmt::format("{:.3f}", t.seconds)};
      if (with_pred) cells.push_back(std::to_string(pred->bytes_at(t.batch)));
      csv.row(cells);
    }
    out << csv.str();
    return;
  }
  if (o.format == Format::markdown) {
    out << "| batch | result | exit | seconds |" << (with_pred ? " predicted |" : "") << "\n";
    out << "|---:|---|---:|---:|" << (with_pred ? "---:|" : "") << "\n";
    for (const Trial& t : r.tries) {
      out << "| " << t.batch << " | " << outcome_name(t.outcome) << " | " << t.exit_code << " | "
          << seconds_text(t.seconds) << " |";
      if (with_pred) out << " " << predicted_text(pred, t.batch, o.units) << " |";
      out << "\n";
    }
  } else {
    out << fmt::format("{:>8}  {:<11}  {:>4}  {:>8}", "batch", "result", "exit", "seconds")
        << (with_pred ? fmt::format("  {:>10}", "predicted") : "") << "\n";
    for (const Trial& t : r.tries) {
      out << fmt::format("{:>8}  {:<11}  {:>4}  {:>8}", t.batch, outcome_name(t.outcome), t.exit_code,
                         seconds_text(t.seconds))
          << (with_pred ? fmt::format("  {:>10}", predicted_text(pred, t.batch, o.units)) : "") << "\n";
    }
  }
  out << "\n";
  switch (r.end) {
    case LadderEnd::found:
      out << "largest batch that ran: " << *r.largest_ok << "\n";
      break;
    case LadderEnd::none_fit:
      out << "no batch ran: every try down to the minimum ran out of memory\n";
      break;
    case LadderEnd::failed:
      out << "stopped: batch " << r.tries.back().batch << " failed in a way that is not out of memory";
      if (r.largest_ok) out << " (largest batch that ran so far: " << *r.largest_ok << ")";
      out << "\n";
      break;
    case LadderEnd::interrupted:
      out << "interrupted";
      if (r.largest_ok) out << " (largest batch that ran so far: " << *r.largest_ok << ")";
      out << "\n";
      break;
  }
}

int run_ladder_command(CLI::App& sub, const LadderOptions& opt, Io& io) {
  const OutputOptions o = resolve_output_options(opt.output, io);
  const std::vector<std::string> plan = plan_args(sub);
  const bool start_auto = opt.start == "auto";
  if (opt.start.empty()) throw Error("--start", "is required (a batch size, or auto)");
  if (start_auto && plan.empty())
    throw Error("--start",
                "auto needs the estimate flags before --, e.g. --model gpt2 --seq 1024 --gpu local");
  const std::optional<Prediction> pred = prediction_for(plan, start_auto ? "--start auto" : "estimate flags");

  LadderSettings ladder;
  ladder.min = parse_batch_size("--min", opt.min);
  ladder.start = start_auto ? std::max(pred->max_batch, ladder.min) : parse_batch_size("--start", opt.start);
  ladder.refine = opt.refine;
  ladder.step = parse_count("--step", opt.step);
  const TrialSettings trial = resolve_run_options(opt.run, io, k_example);
  check_runnable(substitute_batch(trial.command, 1)[0]);

  PrintingObserver observer(io.err, o.quiet, !mentions_batch(trial.command));
  std::unique_ptr<ProcessRunner> runner = make_system_runner();
  LadderResult r;
  {
    InterruptScope interrupts;
    r = run_ladder(*runner, trial, ladder, &observer);
  }

  if (o.format == Format::json) {
    io.out << to_json(r, trial, ladder, start_auto, plan, pred).dump(2) << "\n";
  } else if (o.quiet && o.format == Format::table) {
    if (r.largest_ok && r.end == LadderEnd::found) io.out << *r.largest_ok << "\n";
  } else {
    print_rows(io.out, r, o, pred);
  }

  switch (r.end) {
    case LadderEnd::found:
      return k_ok;
    case LadderEnd::none_fit:
      return k_no_fit;
    case LadderEnd::failed:
      report_failure(io.err, r.tries.back(), trial);
      return k_command_failed;
    case LadderEnd::interrupted:
      io.err << "memplan: interrupted by " << interrupt_name() << "\n";
      return interrupted_exit_code();
  }
  return k_ok;
}

}  // namespace

void add_ladder(CLI::App& sub, Runner& run) {
  auto opt = std::make_shared<LadderOptions>();
  sub.add_option("--start", opt->start, "First batch size to try, or auto (memplan's max-batch prediction)");
  sub.add_option("--min", opt->min, "Smallest batch size to try (default 1)");
  sub.add_flag("--refine", opt->refine, "After halving, search between the last OOM and the last success");
  sub.add_option("--step", opt->step, "Refine only to multiples of this (default 1)");
  add_run_options(sub, opt->run);
  add_output_options(sub, opt->output);
  sub.footer(
      "Runs COMMAND (after --, no shell) with {batch} replaced; also sets MEMPLAN_BATCH.\n"
      "Estimate flags (--model, --seq, --gpu, ...) before -- feed --start auto.\n"
      "Exit: 0 a batch ran, 1 none did, 2 bad input, 4 a failure that is not OOM, 130 Ctrl-C, 143 SIGTERM.\n"
      "Example: " +
      std::string(k_example));
  CLI::App* self = &sub;
  run = [self, opt](Io& io) { return run_ladder_command(*self, *opt, io); };
}

}  // namespace memplan::cli
