// memplan why-oom [FILE]: reads an out-of-memory message (PyTorch, vLLM, llama.cpp) from FILE or
// stdin and says what its numbers mean and what to do. With the run's planning flags (or --plan),
// also which term outgrew the GPU and the cheapest fix (the advise search).
#include <algorithm>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include <memplan/estimate.hpp>
#include <memplan/fit.hpp>
#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"
#include "core/base/file_reader.hpp"
#include "core/base/terminal_text.hpp"
#include "core/diagnose/oom_message.hpp"
#include "core/planning/advise.hpp"

#include "cli/command.hpp"
#include "cli/plan_options.hpp"
#include "cli/render_advice.hpp"
#include "cli/render_oom.hpp"
#include "cli/render_terms.hpp"
#include "cli/text_table.hpp"

namespace memplan::cli {
namespace {

using nlohmann::json;

// Standard input, at most `limit` bytes.
std::string read_stdin(uint64_t limit) {
  std::string text;
  char buf[65536];
  while (std::cin.read(buf, sizeof buf) || std::cin.gcount() > 0) {
    text.append(buf, static_cast<size_t>(std::cin.gcount()));
    if (text.size() > limit)
      throw Error("FILE", "standard input is larger than " + group_thousands(limit) +
                              " bytes (expected a log holding an out-of-memory message)");
  }
  return text;
}

// What memplan's estimate of the run says against the GPU of the message.
struct PlanCheck {
  GpuSpec gpu;
  Estimate estimate;
  FitRow fit;
  std::vector<std::pair<std::string, uint64_t>> terms;  // largest first
  std::optional<Suggestion> fix;                        // the cheapest change that fits
  uint64_t kv_bytes_per_token = 0;                      // vLLM: the model's KV cache per token
};

std::optional<PlanCheck> check_plan(const Plan& plan, const OomMessage& m) {
  PlanCheck c;
  if (m.kind == OomKind::pytorch && m.total) {
    c.gpu.id = m.device ? "gpu" + std::to_string(*m.device) : "gpu";
    c.gpu.name = "the GPU of the message";
    c.gpu.memory_total_bytes = *m.total;
  } else if (plan.gpu_given && !plan.targets.gpus.empty()) {
    c.gpu = plan.targets.gpus.front();
  } else {
    return std::nullopt;
  }
  EstimateRequest r = request_on(plan.request, c.gpu);  // this GPU's CUDA context
  if ((m.kind == OomKind::vllm_max_seq_len || m.kind == OomKind::vllm_kv_needed) && m.max_seq_len) {
    // The --seq bound (options.cpp): a longer max_model_len is no length a model is served at.
    if (m.max_seq_len > (1ull << 32))
      throw Error("FILE", "line " + std::to_string(m.line) + ": the message's max seq len " +
                              group_thousands(m.max_seq_len) +
                              " is more than the 4,294,967,296 tokens memplan plans");
    r.mode = Mode::infer;  // vLLM serves: one request of max_model_len tokens
    r.batch = 1;
    r.seq = m.max_seq_len;
    const Estimate kv = estimate(r);
    if (kv.bytes(TermKind::kv_cache)) c.kv_bytes_per_token = kv.bytes(TermKind::kv_cache) / m.max_seq_len;
  }
  c.estimate = estimate(r);
  c.fit = fit_gpu(c.gpu, r, c.estimate);
  for (const Term& t : c.estimate.terms)
    if (c.estimate.has(t.kind) && t.bytes > 0 && t.kind != TermKind::overhead)
      c.terms.push_back({term_label(c.estimate, t), t.bytes});
  std::stable_sort(c.terms.begin(), c.terms.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (c.fit.verdict == Verdict::no) {
    const Advice a = advise(r, c.gpu, plan.presets.gpus);
    for (const Suggestion& s : a.singles)
      if (s.fits() && s.tier < 3 && (!c.fix || s.cost_rank < c.fix->cost_rank)) c.fix = s;
    for (const Suggestion& s : a.combinations)
      if (s.fits() && (!c.fix || s.cost_rank < c.fix->cost_rank)) c.fix = s;
  }
  return c;
}

std::vector<std::string> plan_lines(const PlanCheck& c, const OomMessage& m, Units u) {
  std::vector<std::string> out;
  const std::string mem = format_bytes(c.fit.memory_bytes, u);
  const bool served = m.kind == OomKind::vllm_max_seq_len || m.kind == OomKind::vllm_kv_needed;
  out.push_back(std::string(served ? "memplan's estimate of one request of max_model_len tokens: required "
                                   : "memplan's estimate of the run: required ") +
                format_bytes(c.fit.required_bytes, u) + " of " + mem + " on " + c.gpu.id + " (" +
                verdict_name(c.fit.verdict) + "), " + format_bytes(c.fit.overhead_bytes, u) +
                (c.fit.overhead_given ? " per-process overhead included." : " of CUDA context included."));
  if (!c.terms.empty()) {
    std::string t;
    for (const auto& [name, b] : c.terms) t += (t.empty() ? "" : ", ") + name + " " + format_bytes(b, u);
    out.push_back("Largest term: " + c.terms.front().first + " (" + format_bytes(c.terms.front().second, u) +
                  "); all: " + t + ".");
  }
  if (c.kv_bytes_per_token && m.kv_tokens) {
    // Issue 32: the log's token counts (up to 18 digits) times the bytes per token, checked.
    const char* what = "FILE: the KV cache of the message's tokens";
    const uint64_t had = checked_mul(c.kv_bytes_per_token, m.kv_tokens, what),
                   need = checked_mul(c.kv_bytes_per_token, m.max_seq_len, what);
    out.push_back("KV cache: " + group_thousands(c.kv_bytes_per_token) + " B per token, so the " +
                  group_thousands(m.kv_tokens) + " tokens vLLM had room for are " + format_bytes(had, u) +
                  " and " + group_thousands(m.max_seq_len) + " tokens need " + format_bytes(need, u) + ".");
  }
  if (c.fix)
    out.push_back("Cheapest fix: " + suggestion_change(*c.fix) + " -> required " +
                  format_bytes(c.fix->required_bytes, u) + " (" + verdict_name(c.fix->verdict) +
                  "); cost: " + suggestion_cost(*c.fix) + ".");
  else if (c.fit.verdict != Verdict::no && m.kind == OomKind::pytorch)
    out.push_back(
        "By the estimate the run fits: what filled the GPU is outside the terms (the allocator's cache, "
        "fragmentation, other processes) - see above.");
  else
    out.push_back("No change of up to 3 knobs makes it fit " + c.gpu.id +
                  ": `memplan advise` lists bigger GPUs.");
  return out;
}

std::string render_text(const std::vector<OomMessage>& msgs,
                        const std::vector<std::optional<PlanCheck>>& checks, const std::string& source,
                        const OutputOptions& out) {
  const bool md = out.format == Format::markdown;
  std::string s;
  if (!out.quiet) s += (md ? "**memplan why-oom**: " : "memplan why-oom: ") + terminal_field(source) + "\n";
  for (size_t i = 0; i < msgs.size(); ++i) {
    const OomMessage& m = msgs[i];
    s += "\n" + std::string(md ? "### " : "") + oom_title(m) + " (line " + std::to_string(m.line) + ")\n";
    const std::vector<OomFact> facts = oom_facts(m, out.units);
    if (!facts.empty()) {
      using A = TextTable::Align;
      TextTable t({{"number", A::left}, {"value", A::right}, {"what it is", A::left}});
      for (const OomFact& f : facts) t.add_row({f.label, f.value, f.meaning});
      s += (md ? "\n" : "") + (md ? t.render_markdown() : t.render());
    }
    s += md ? "\n" : "";
    for (const std::string& f : oom_findings(m, out.units, checks[i].has_value()))
      s += (md ? "- " : "  - ") + f + "\n";
    if (checks[i])
      for (const std::string& l : plan_lines(*checks[i], m, out.units)) s += (md ? "- " : "  - ") + l + "\n";
  }
  return s;
}

json opt(const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); }

std::string render_json(const std::vector<OomMessage>& msgs,
                        const std::vector<std::optional<PlanCheck>>& checks, const std::string& source,
                        const OutputOptions& out) {
  json list = json::array();
  for (size_t i = 0; i < msgs.size(); ++i) {
    const OomMessage& m = msgs[i];
    const OomReading r = read_pytorch_oom(m);
    json procs = json::array();
    for (const auto& [pid, b] : m.processes) procs.push_back({{"pid", pid}, {"bytes", b}});
    json plan = nullptr;
    if (checks[i]) {
      const PlanCheck& c = *checks[i];
      plan = {{"gpu", c.gpu.id},
              {"memory_bytes", c.fit.memory_bytes},
              {"required_bytes", c.fit.required_bytes},
              {"verdict", verdict_name(c.fit.verdict)},
              {"largest_term", c.terms.empty() ? json(nullptr) : json(c.terms.front().first)},
              {"fix", c.fix ? json{{"change", suggestion_change(*c.fix)},
                                   {"required_bytes", c.fix->required_bytes},
                                   {"verdict", verdict_name(c.fix->verdict)}}
                            : json(nullptr)}};
    }
    list.push_back({{"kind", oom_kind_name(m.kind)},
                    {"line", m.line},
                    {"device", m.device ? json(*m.device) : json(nullptr)},
                    {"requested_bytes", opt(m.requested)},
                    {"total_bytes", opt(m.total)},
                    {"free_bytes", opt(m.free)},
                    {"allocated_bytes", opt(m.allocated)},
                    {"reserved_bytes", opt(m.reserved)},
                    {"reserved_unallocated_bytes", opt(r.reserved_unallocated)},
                    {"process_bytes", opt(m.process_in_use)},
                    {"processes", procs},
                    {"other_processes_bytes", opt(r.other_processes)},
                    {"shortfall_bytes", opt(r.shortfall)},
                    {"max_seq_len", m.max_seq_len ? json(m.max_seq_len) : json(nullptr)},
                    {"kv_cache_tokens", m.kv_tokens ? json(m.kv_tokens) : json(nullptr)},
                    {"kv_cache_needed_bytes", opt(m.kv_needed)},
                    {"kv_cache_available_bytes", opt(m.kv_available)},
                    {"buffer_bytes", opt(m.buffer_bytes)},
                    {"buffer_device", m.buffer_device.empty() ? json(nullptr) : json(m.buffer_device)},
                    {"findings", oom_finding_codes(m)},
                    {"explanation", oom_findings(m, out.units, checks[i].has_value())},
                    {"plan", plan}});
  }
  return json{{"schema", "memplan.why-oom/1"}, {"source", source}, {"messages", list}}.dump(2) + "\n";
}

}  // namespace

void add_why_oom(CLI::App& sub, Runner& run) {
  struct State {
    std::string file;
    RawPlan plan;
    RawOutputOptions output;
  };
  auto s = std::make_shared<State>();
  sub.add_option("FILE", s->file, "A log holding the out-of-memory message (default: standard input; - too)");
  add_plan_options(sub, s->plan, PlanScope::torch_step);
  add_output_options(sub, s->output);
  run = [s](Io& io) {
    const OutputOptions out = resolve_output_options(s->output, io);
    if (out.format == Format::csv)
      throw Error("--format", "csv is not offered by why-oom (expected table, markdown or json)");
    const bool from_stdin = s->file.empty() || s->file == "-";
    const std::string source = from_stdin ? "standard input" : s->file;
    const std::string text = from_stdin ? read_stdin(read_limit::k_oom_message)
                                        : read_small_file(s->file, read_limit::k_oom_message, "FILE");
    size_t omitted = 0;
    const std::vector<OomMessage> msgs = parse_oom_messages(text, &omitted);
    if (msgs.empty())
      throw Error("FILE", source +
                              " holds no out-of-memory message memplan reads (expected PyTorch's \"CUDA out "
                              "of memory. Tried to allocate ...\", vLLM's KV cache errors or llama.cpp's "
                              "\"failed to allocate ... buffer\")");
    std::vector<std::optional<PlanCheck>> checks(msgs.size());
    if (!s->plan.given.empty() || !s->plan.plan_file.empty()) {
      const Plan plan = resolve_plan(s->plan);
      for (size_t i = 0; i < msgs.size(); ++i) checks[i] = check_plan(plan, msgs[i]);
    }
    io.out << (out.format == Format::json ? render_json(msgs, checks, source, out)
                                          : render_text(msgs, checks, source, out));
    if (omitted)
      io.err << "memplan why-oom: showed the first " << msgs.size() << " distinct messages; "
             << group_thousands(omitted) << " more after them were not read\n";
    return k_ok;
  };
}

}  // namespace memplan::cli
