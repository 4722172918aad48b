#include "cli/diff_input.hpp"

#include <algorithm>
#include <limits>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include <memplan/estimate.hpp>
#include <memplan/fit.hpp>
#include "core/base/file_reader.hpp"
#include "core/base/json_text.hpp"
#include "core/base/terminal_text.hpp"

#include "cli/plan_options.hpp"

namespace memplan::cli {
namespace {

using nlohmann::json;

uint64_t need_bytes(const json& obj, const std::string& key, const std::string& where) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_unsigned())
    throw Error(where, "\"" + key + "\" is missing or not a byte count (expected a non-negative integer)");
  return it->get<uint64_t>();
}

int64_t need_signed(const json& obj, const std::string& key, const std::string& where) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer())
    throw Error(where, "\"" + key + "\" is missing or not an integer");
  return it->get<int64_t>();
}

Verdict need_verdict(const json& obj, const std::string& where) {
  const auto it = obj.find("verdict");
  if (it != obj.end() && it->is_string())
    for (Verdict v : {Verdict::fits, Verdict::tight, Verdict::no})
      if (it->get<std::string>() == verdict_name(v)) return v;
  throw Error(where, "\"verdict\" is missing or not one of fits, tight, no");
}

// The breakdown in the estimate's term order; keys memplan does not know (a newer version's) after.
std::vector<DiffSide::Term> read_terms(const json& breakdown, const std::string& where) {
  if (!breakdown.is_object()) throw Error(where, "\"breakdown\" is not an object");
  std::vector<DiffSide::Term> terms;
  std::vector<std::string> known;
  for (size_t k = 0; k < k_term_kinds; ++k) {
    const std::string key = term_key(static_cast<TermKind>(k));
    known.push_back(key);
    if (breakdown.contains(key)) terms.push_back({key, need_bytes(breakdown, key, where + ": breakdown")});
  }
  for (auto it = breakdown.begin(); it != breakdown.end(); ++it)
    if (std::find(known.begin(), known.end(), it.key()) == known.end())
      terms.push_back({it.key(), need_bytes(breakdown, it.key(), where + ": breakdown")});
  return terms;
}

DiffSide read_output(const json& doc, const std::string& where) {
  DiffSide s;
  if (doc.contains("breakdown")) s.terms = read_terms(doc["breakdown"], where);
  s.total_bytes = need_bytes(doc, "total_bytes", where);
  s.required_bytes = need_bytes(doc, "required_bytes", where);
  const auto fit = doc.find("fit");
  if (fit == doc.end() || !fit->is_array()) throw Error(where, "\"fit\" is missing or not a list");
  std::unordered_set<std::string> ids;
  for (size_t i = 0; i < fit->size(); ++i) {
    const json& row = (*fit)[i];
    const std::string at = where + ": fit[" + std::to_string(i) + "]";
    if (!row.is_object() || !row.contains("gpu") || !row["gpu"].is_string())
      throw Error(at, "is not a GPU row (expected \"gpu\", \"memory_bytes\", \"required_bytes\", ...)");
    DiffSide::Gpu g{row["gpu"].get<std::string>(), need_bytes(row, "memory_bytes", at),
                    need_bytes(row, "required_bytes", at), need_signed(row, "spare_bytes", at),
                    need_verdict(row, at)};
    // Issue 32: a GPU of no memory is no GPU fit could have judged (a negative, NaN or infinite one is
    // no byte count above, or no JSON).
    if (g.memory_bytes == 0)
      throw Error(at, "\"memory_bytes\" is 0 (expected the GPU's memory in bytes, more than 0)");
    // Issue 32: fit writes spare = memory - required (src/core/planning/fit.cpp, clamped to 2^63 - 1
    // only for a surplus above it); a row that disagrees (memory 0, spare 2^63 - 1) is refused.
    const int64_t k_max = std::numeric_limits<int64_t>::max();
    const int64_t expect =
        g.memory_bytes >= g.required_bytes
            ? static_cast<int64_t>(std::min<uint64_t>(g.memory_bytes - g.required_bytes, k_max))
            : (g.required_bytes - g.memory_bytes > static_cast<uint64_t>(k_max)
                   ? -k_max
                   : -static_cast<int64_t>(g.required_bytes - g.memory_bytes));
    if (g.spare_bytes != expect)
      throw Error(at, "\"spare_bytes\" " + std::to_string(g.spare_bytes) +
                          " is not memory_bytes - required_bytes (" + std::to_string(expect) + ")");
    // Issue 32: a GPU id listed twice in one input cannot be matched to the other side.
    if (!ids.insert(g.id).second)
      throw Error(at, "GPU \"" + terminal_field(g.id) + "\" is listed more than once");
    s.gpus.push_back(std::move(g));
  }
  return s;
}

// A plan file: resolved as `estimate --plan FILE` would, against its GPUs (or the default ones).
DiffSide compute_plan(const std::string& path) {
  RawPlan raw;
  raw.plan_file = path;
  const Plan plan = resolve_plan(raw);
  const Estimate e = estimate(plan.request);
  DiffSide s;
  for (const Term& t : e.terms)
    if (e.has(t.kind)) s.terms.push_back({term_key(t.kind), t.bytes});
  s.total_bytes = e.total_bytes();
  s.required_bytes = e.required_bytes();
  for (const GpuSpec& g : plan.targets.gpus) {
    const FitRow r = fit_gpu(g, plan.request, e);
    s.gpus.push_back({g.id, r.memory_bytes, r.required_bytes, r.spare_bytes, r.verdict});
  }
  return s;
}

}  // namespace

DiffInput parse_diff_input(std::string_view text, const std::string& path, const std::string& subject,
                           bool resolve_plans) {
  const json doc = memplan::detail::parse_json_text(text, path, "the input");
  if (!doc.is_object())
    throw Error(subject,
                "\"" + terminal_field(path) +
                    "\" is not a JSON object (expected an estimate or fit --format json output, or a plan)");
  DiffInput in;
  in.path = path;
  const auto schema = doc.find("schema");
  if (schema == doc.end()) {
    in.kind = "plan";
    if (resolve_plans) in.side = compute_plan(path);
    return in;
  }
  const std::string name = schema->is_string() ? schema->get<std::string>() : schema->dump();
  // Issue 32: a 15 MB object as "schema" is named by its first bytes and its length, not copied whole.
  const std::string shown = terminal_field(name);
  if (name != "memplan.estimate/1" && name != "memplan.fit/1")
    throw Error(subject, "\"" + terminal_field(path) + "\" is a " + shown +
                             " output (expected memplan.estimate/1 or memplan.fit/1, or a plan file)");
  in.kind = name;
  in.side = read_output(doc, path);
  return in;
}

DiffInput read_diff_input(const std::string& path, const std::string& subject) {
  return parse_diff_input(read_small_file(path, read_limit::k_json_output, subject), path, subject, true);
}

}  // namespace memplan::cli
