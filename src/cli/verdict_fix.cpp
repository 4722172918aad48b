// The cheapest change that turns a "no" into a fit (verdict_fix.hpp).
#include "cli/verdict_fix.hpp"

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/planning/advise.hpp"

#include "cli/render_advice.hpp"

namespace memplan::cli {
namespace {

VerdictFix fix_of(const Suggestion& s, const std::string& gpu) {
  VerdictFix f;
  f.gpu = gpu;
  f.change = suggestion_change(s);
  for (const AdviceChange& c : s.changes) f.knobs.emplace_back(advice_knob_name(c.knob));
  f.required_bytes = s.required_bytes;
  f.verdict = s.verdict;
  f.on_gpu = s.gpu;
  f.gpus = s.gpus;
  return f;
}

}  // namespace

std::vector<std::optional<VerdictFix>> verdict_fixes(const Plan& plan, const std::vector<FitRow>& fit) {
  std::vector<std::optional<VerdictFix>> out;
  for (const FitRow& row : fit) {
    if (row.verdict != Verdict::no) {
      out.emplace_back();
      continue;
    }
    try {
      const std::optional<Suggestion> s = cheapest_fit(plan.request, row.gpu, plan.presets.gpus);
      out.push_back(s ? std::optional<VerdictFix>(fix_of(*s, row.gpu.id)) : std::nullopt);
    } catch (const Error&) {  // a run the playbook cannot vary (advise says why when asked)
      out.emplace_back();
    }
  }
  return out;
}

std::string verdict_fix_lines(const std::vector<FitRow>& fit,
                              const std::vector<std::optional<VerdictFix>>& fixes, Units units,
                              bool markdown) {
  std::string s;
  for (size_t i = 0; i < fit.size() && i < fixes.size(); ++i) {
    if (fit[i].verdict != Verdict::no) continue;
    const std::string head = std::string(markdown ? "- " : "  ") + "no on " + fit[i].gpu.id + ": ";
    if (!fixes[i]) {
      s += head + "no single change or combination of advise's fits\n";
      continue;
    }
    const VerdictFix& f = *fixes[i];
    std::string where;
    if (f.gpus > 1)
      where = " on each of " + std::to_string(f.gpus) + " x " + f.on_gpu;
    else if (f.on_gpu != f.gpu)
      where = " on " + f.on_gpu;
    s += head + "cheapest change that fits: " + f.change + " -> " + format_bytes(f.required_bytes, units) +
         ", " + verdict_name(f.verdict) + where + " (memplan advise for the others)\n";
  }
  return s;
}

nlohmann::json verdict_fix_json(const std::optional<VerdictFix>& fix) {
  if (!fix) return nullptr;
  return {{"change", fix->change},
          {"knobs", fix->knobs},
          {"required_bytes", fix->required_bytes},
          {"verdict", verdict_name(fix->verdict)},
          {"gpu", fix->on_gpu},
          {"gpus", fix->gpus}};
}

}  // namespace memplan::cli
