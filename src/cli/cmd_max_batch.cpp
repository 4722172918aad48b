// memplan max-batch: the largest micro-batch that fits each GPU, and the accumulation steps
// that give back --effective-batch; --max-seq: the longest sequence at the given batch.
#include <memory>
#include <optional>

#include <memplan/error.hpp>
#include <memplan/fit.hpp>
#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"
#include "core/base/quantity_kinds.hpp"
#include "core/planning/planning.hpp"

#include "cli/command.hpp"
#include "cli/emit_choice.hpp"
#include "cli/emit_config.hpp"
#include "cli/plan_options.hpp"
#include "cli/render_cuda_context.hpp"
#include "cli/render_estimate.hpp"
#include "cli/render_fit.hpp"
#include "cli/text_table.hpp"

namespace memplan::cli {
namespace {

// One GPU's answer: the largest micro-batch (with the accumulation that reaches the effective
// batch) or, with --max-seq, the longest sequence at the given batch.
struct MaxBatchRow {
  GpuSpec gpu;
  uint64_t memory_bytes = 0;
  uint64_t required_bytes = 0;
  uint64_t overhead_bytes = 0;  // the CUDA context on this GPU (or --overhead)
  bool capped = false;          // the search stopped at its limit: at least this much fits
  uint64_t micro_batch = 0;
  uint64_t max_micro_batch = 0;
  uint64_t accumulation_steps = 0;  // 0 without --effective-batch
  uint64_t data_parallel_ranks = 1;
  uint64_t effective_batch = 0;  // micro x accumulation x ranks
  uint64_t max_seq = 0;
};

struct MaxBatchResult {
  bool max_seq = false;    // rows answer --max-seq
  uint64_t batch = 0;      // --max-seq: the micro-batch
  uint64_t effective = 0;  // --effective-batch (0: not given)
  std::vector<MaxBatchRow> rows;
  std::vector<std::string> notes;

  bool none_fit() const {
    for (const MaxBatchRow& r : rows)
      if (max_seq ? r.max_seq == 0 : r.micro_batch == 0) return true;
    return false;
  }
};

MaxBatchResult compute(const Plan& plan, bool by_seq, uint64_t effective) {
  MaxBatchResult res;
  res.max_seq = by_seq;
  res.batch = plan.request.batch;
  res.effective = effective;
  for (const GpuSpec& g : plan.targets.gpus) {
    MaxBatchRow row;
    row.gpu = g;
    row.memory_bytes = g.usable_bytes();
    const EstimateRequest on = request_on(plan.request, g);  // with this GPU's CUDA context
    row.overhead_bytes = on.overhead_bytes;
    if (by_seq) {
      row.max_seq = max_seq(on, row.memory_bytes, row.capped);
      EstimateRequest r = on;
      r.seq = row.max_seq ? row.max_seq : 1;
      row.required_bytes = estimate(r).required_bytes();
    } else {
      const BatchPlan p = max_batch(on, row.memory_bytes, effective);
      row.micro_batch = p.micro_batch;
      row.max_micro_batch = p.max_micro_batch;
      row.accumulation_steps = effective ? p.accumulation_steps : 0;
      row.data_parallel_ranks = p.data_parallel_ranks;
      row.effective_batch = effective ? p.effective_batch : checked_mul(p.micro_batch, p.data_parallel_ranks);
      row.required_bytes = p.required_bytes;
      row.capped = p.capped;
    }
    res.rows.push_back(row);
  }
  for (const MaxBatchRow& r : res.rows) {
    if (by_seq || r.max_micro_batch == r.micro_batch || r.micro_batch == 0) continue;
    const std::string ranks =
        r.data_parallel_ranks > 1 ? " x " + std::to_string(r.data_parallel_ranks) + " ranks" : "";
    if (r.accumulation_steps == 1)
      res.notes.push_back(r.gpu.id + ": up to " + group_thousands(r.max_micro_batch) +
                          " fits; the effective batch needs no accumulation");
    else
      res.notes.push_back(r.gpu.id + ": up to " + group_thousands(r.max_micro_batch) + " fits; " +
                          std::to_string(r.micro_batch) + " x " + std::to_string(r.accumulation_steps) +
                          " steps" + ranks + " reaches " + std::to_string(r.effective_batch) +
                          " with the fewest steps and less memory");
  }
  // The effective batch's arithmetic over the data-parallel ranks (each runs its own micro-batches).
  for (const MaxBatchRow& r : res.rows) {
    if (by_seq || r.data_parallel_ranks <= 1 || r.micro_batch == 0) continue;
    const std::string steps = effective ? std::to_string(r.accumulation_steps) : "1";
    res.notes.push_back(r.gpu.id + ": effective batch = micro-batch " + group_thousands(r.micro_batch) +
                        " x " + steps + (steps == "1" ? " step" : " steps") + " x " +
                        std::to_string(r.data_parallel_ranks) +
                        " data-parallel ranks = " + group_thousands(r.effective_batch));
  }
  for (const GpuSpec& g : plan.targets.gpus)
    for (const std::string& w : fit_warning_texts(hardware_warnings(g, plan.request), g))
      res.notes.push_back(g.id + ": " + w);
  for (const std::string& n : plan.targets.device_notes) res.notes.push_back(n);
  if (plan.request.model.has_batchnorm)
    res.notes.push_back(
        "the model has BatchNorm: its statistics see the micro-batch, so accumulation does not reproduce a "
        "large batch");
  if (effective)
    res.notes.push_back(
        "the learning rate follows the effective batch (micro-batch x accumulation steps x data-parallel "
        "ranks); divide the loss by the accumulation steps");
  return res;
}

nlohmann::json to_json(const Plan& plan, const MaxBatchResult& res) {
  using nlohmann::json;
  json rows = json::array();
  for (const MaxBatchRow& r : res.rows) {
    if (res.max_seq) {
      rows.push_back({{"gpu", r.gpu.id},
                      {"batch", res.batch},
                      {"max_seq", r.max_seq},
                      {"required_bytes", r.required_bytes},
                      {"overhead_bytes", r.overhead_bytes},
                      {"memory_bytes", r.memory_bytes},
                      {"capped", r.capped}});
      continue;
    }
    rows.push_back({{"gpu", r.gpu.id},
                    {"micro_batch", r.micro_batch},
                    {"max_micro_batch", r.max_micro_batch},
                    {"accumulation_steps", res.effective ? json(r.accumulation_steps) : json(nullptr)},
                    {"data_parallel_ranks", r.data_parallel_ranks},
                    {"effective_batch", r.effective_batch},
                    {"required_bytes", r.required_bytes},
                    {"overhead_bytes", r.overhead_bytes},
                    {"memory_bytes", r.memory_bytes},
                    {"capped", r.capped}});
  }
  return {{"schema", "memplan.max-batch/1"},
          {"inputs", plan.inputs},
          {"effective_batch", res.effective ? json(res.effective) : json(nullptr)},
          {"results", rows},
          {"notes", res.notes}};
}

// --max-seq rows have their own columns: the batch and the longest sequence.
std::string to_csv(const MaxBatchResult& res) {
  CsvWriter w;
  if (res.max_seq) {
    w.row({"gpu", "batch", "max_seq", "required_bytes", "memory_bytes"});
    for (const MaxBatchRow& r : res.rows)
      w.row({r.gpu.id, std::to_string(res.batch), std::to_string(r.max_seq), std::to_string(r.required_bytes),
             std::to_string(r.memory_bytes)});
    return w.str();
  }
  w.row({"gpu", "micro_batch", "accumulation_steps", "effective_batch", "required_bytes", "memory_bytes"});
  for (const MaxBatchRow& r : res.rows)
    w.row({r.gpu.id, std::to_string(r.micro_batch), res.effective ? std::to_string(r.accumulation_steps) : "",
           std::to_string(r.effective_batch), std::to_string(r.required_bytes),
           std::to_string(r.memory_bytes)});
  return w.str();
}

// "required includes the CUDA context predicted for each GPU (CUDA 13.0, lazy module loading): t4 460.8 MiB,
// ..."
std::string overhead_note(const Plan& plan, const MaxBatchResult& res, Units units) {
  if (plan.request.overhead_given)
    return "required includes " + format_bytes(plan.request.overhead_bytes, units) +
           " of overhead per GPU (--overhead)";
  std::string list;
  for (const MaxBatchRow& r : res.rows)
    list +=
        (list.empty() ? "" : ", ") + r.gpu.id + " " + format_bytes(r.overhead_bytes, units) +
        (gpu_runtime(r.gpu) == GpuRuntime::cuda ? ""
                                                : std::string(" (") + runtime_name(gpu_runtime(r.gpu)) +
                                                      ": no measured context figure, the H200's CUDA one)");
  bool cuda = false;
  for (const MaxBatchRow& r : res.rows) cuda = cuda || gpu_runtime(r.gpu) == GpuRuntime::cuda;
  if (!cuda) return "required includes each GPU's overhead (--overhead to set one figure): " + list;
  return "required includes the CUDA context predicted for each GPU (" +
         cuda_runtime_text(plan.request.cuda) + "; --overhead to set one figure): " + list;
}

std::string to_table(const Plan& plan, const MaxBatchResult& res, const OutputOptions& out) {
  using A = TextTable::Align;
  TextTable t(res.max_seq ? std::vector<std::pair<std::string, A>>{{"gpu", A::left},
                                                                   {"batch", A::right},
                                                                   {"max seq", A::right},
                                                                   {"required", A::right},
                                                                   {"memory", A::right}}
                          : std::vector<std::pair<std::string, A>>{{"gpu", A::left},
                                                                   {"micro-batch", A::right},
                                                                   {"accumulation", A::right},
                                                                   {"effective", A::right},
                                                                   {"required", A::right},
                                                                   {"memory", A::right}});
  for (const MaxBatchRow& r : res.rows) {
    if (res.max_seq)
      t.add_row({r.gpu.id, std::to_string(res.batch), (r.capped ? ">= " : "") + group_thousands(r.max_seq),
                 format_bytes(r.required_bytes, out.units), format_bytes(r.memory_bytes, out.units)});
    else
      t.add_row({r.gpu.id, (r.capped ? ">= " : "") + group_thousands(r.micro_batch),
                 res.effective ? std::to_string(r.accumulation_steps) : "-",
                 group_thousands(r.effective_batch), format_bytes(r.required_bytes, out.units),
                 format_bytes(r.memory_bytes, out.units)});
  }
  std::string s;
  if (!out.quiet)
    s += "memplan max-batch: " + plan.request.model.name + ", " + plan.request.recipe.name +
         (res.max_seq ? ", longest sequence at batch " + std::to_string(res.batch) : "") + "\n\n";
  s += out.format == Format::markdown ? t.render_markdown() : t.render();
  if (!out.quiet) {
    for (const std::string& n : res.notes) s += "  note: " + n + "\n";
    s += "  note: " + overhead_note(plan, res, out.units) + "\n";
  }
  return s;
}

}  // namespace

void add_max_batch(CLI::App& sub, Runner& run) {
  struct State {
    RawPlan plan;
    RawOutputOptions output;
    std::string effective;
    bool max_seq = false;
    std::string emit;
    CLI::Option* emit_option = nullptr;
  };
  auto s = std::make_shared<State>();
  add_plan_options(sub, s->plan, PlanScope::torch_step);
  add_output_options(sub, s->output);
  sub.add_option("--effective-batch", s->effective, "Effective batch to reach with gradient accumulation");
  sub.add_flag("--max-seq", s->max_seq, "Find the longest sequence that fits at --batch instead");
  s->emit_option =
      sub.add_option("--emit", s->emit,
                     "Write the batch found (and the accumulation steps) as a config: deepspeed, "
                     "axolotl, llamafactory, torchtune, accelerate, trainer or flags (no value: --from's)")
          ->expected(0, 1);
  Runner body = [s](Io& io) {
    const OutputOptions out = resolve_output_options(s->output, io);
    const bool emit = s->emit_option->count() > 0;
    const std::optional<FromReport> from = emit ? read_from(s->plan) : std::nullopt;
    const EmitFramework framework =
        emit ? parse_emit_framework(s->emit, from ? &*from : nullptr) : EmitFramework::flags;
    const Plan plan = resolve_plan(s->plan);
    if (!plan.gpu_given) throw Error("--gpu", "required: the GPUs to plan for (e.g. --gpu rtx-4090)");
    uint64_t effective = 0;
    if (!s->effective.empty()) {
      effective = parse_batch_size("--effective-batch", s->effective, 1ull << 40);
      if (!effective) throw Error("--effective-batch", "\"0\" must be at least 1");
    }
    if (emit && plan.targets.gpus.size() != 1)
      throw Error("--emit",
                  "writes the batch of one GPU; --gpu names " + std::to_string(plan.targets.gpus.size()));
    const MaxBatchResult res = compute(plan, s->max_seq, effective);
    std::optional<EmitRequest> emitting;
    std::optional<EmittedConfig> emitted;
    if (emit && !res.none_fit()) {
      const MaxBatchRow& r = res.rows.front();
      emitting =
          batch_emit_request(plan.request, r.gpu, r.micro_batch, res.effective ? r.accumulation_steps : 0,
                             res.max_seq ? r.max_seq : 0, r.required_bytes, out.units);
      emitting->framework = framework;
      emitting->from = from ? &*from : nullptr;
      emitted = emit_config(*emitting);
    }
    if (emit && out.format != Format::json) {
      if (!emitted) {
        io.err << "memplan: --emit: nothing fits " << plan.targets.gpus.front().id
               << ": no config to write\n";
        return k_no_fit;
      }
      print_emitted(*emitted, *emitting, io);
      return k_ok;
    }
    if (out.format == Format::json) {
      nlohmann::json doc = to_json(plan, res);
      if (emitted) doc["emit"] = emitted_json(*emitted, *emitting);
      io.out << doc.dump(2) << "\n";
    } else if (out.format == Format::csv)
      io.out << to_csv(res);
    else
      io.out << to_table(plan, res, out);
    if (plan.targets.asked_local && !plan.targets.device_notes.empty()) {  // as fit: no GPU readable
      for (const std::string& n : plan.targets.device_notes) io.err << "memplan: " << n << "\n";
      return k_no_device;
    }
    return res.none_fit() ? k_no_fit : k_ok;
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
