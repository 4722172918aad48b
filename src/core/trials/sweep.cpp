#include "core/trials/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"

namespace memplan {

namespace {

// A number then a rate unit: "812.5 rows/s", "3.2it/s", "1.5e3 samples/s", "4.10s/it".
const char* const k_default_pattern =
    R"(([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)\s*(rows/s|samples/s|it/s|s/it)(?![A-Za-z0-9_]))";

std::optional<double> to_number(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

}  // namespace

ThroughputParser::ThroughputParser(const std::optional<std::string>& pattern)
    : m_custom(pattern.has_value()) {
  const std::string text = pattern ? *pattern : k_default_pattern;
  if (pattern && pattern->empty())
    throw Error(Field::throughput_pattern, "is empty (expected a regular expression)");
  try {
    m_regex = std::regex(text, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw Error(Field::throughput_pattern, "\"" + text + "\" is not a regular expression (" + e.what() + ")");
  }
}

std::optional<double> ThroughputParser::parse(std::string_view line, double rows_per_step) const {
  std::optional<double> found;
  for (auto it = std::cregex_iterator(line.data(), line.data() + line.size(), m_regex);
       it != std::cregex_iterator(); ++it) {
    const std::cmatch& m = *it;
    if (m_custom) {
      const auto v = to_number(m.size() > 1 && m[1].matched ? m[1].str() : m[0].str());
      if (v) found = v;
      continue;
    }
    const auto v = to_number(m[1].str());
    if (!v) continue;
    const std::string unit = m[2].str();
    if (unit == "it/s")
      found = *v * rows_per_step;
    else if (unit == "s/it") {
      if (*v > 0) found = rows_per_step / *v;
    } else
      found = *v;
  }
  return found;
}

uint64_t rows_per_step(const std::string& expression, uint64_t batch) {
  uint64_t product = 1;
  size_t from = 0;
  bool any = false;
  while (from <= expression.size()) {
    size_t star = expression.find('*', from);
    if (star == std::string::npos) star = expression.size();
    std::string factor = expression.substr(from, star - from);
    while (!factor.empty() && factor.front() == ' ') factor.erase(factor.begin());
    while (!factor.empty() && factor.back() == ' ') factor.pop_back();
    if (factor.empty())
      throw Error(Field::rows_per_step,
                  "\"" + expression + "\" is not a count (expected e.g. {batch}, 2048 or {batch}*1024)");
    const uint64_t value = factor == "{batch}" ? batch : parse_count(Field::rows_per_step, factor);
    product = checked_mul(product, value);
    any = true;
    from = star + 1;
  }
  if (!any || product == 0) throw Error(Field::rows_per_step, "\"" + expression + "\" must be at least 1");
  return product;
}

const char* source_name(ThroughputSource source) {
  switch (source) {
    case ThroughputSource::printed:
      return "printed";
    case ThroughputSource::wall_time:
      return "wall_time";
    case ThroughputSource::none:
      return "none";
  }
  return "?";
}

std::optional<size_t> find_bend(const std::vector<SweepPoint>& points, double within) {
  std::optional<double> best;
  for (const SweepPoint& p : points)
    if (p.throughput && (!best || *p.throughput > *best)) best = p.throughput;
  if (!best) return std::nullopt;
  const double floor = (1.0 - within) * *best;
  for (size_t i = 0; i < points.size(); ++i)
    if (points[i].throughput && *points[i].throughput >= floor) return i;
  return std::nullopt;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::vector<uint64_t> auto_batches(uint64_t max_batch, size_t count) {
  std::vector<uint64_t> out;
  for (uint64_t b = 1; b != 0 && b <= max_batch; b *= 2) out.push_back(b);
  if (out.size() > count) out.erase(out.begin(), out.end() - static_cast<std::ptrdiff_t>(count));
  if (max_batch > 0 && out.back() != max_batch) out.push_back(max_batch);
  return out;
}

SweepResult run_sweep(ProcessRunner& runner, const TrialSettings& trial, const SweepSettings& sweep,
                      TrialObserver* observer) {
  if (sweep.batches.empty()) throw Error(Field::batches, "is empty (expected e.g. 16,32,64,128)");
  if (sweep.repeat == 0) throw Error(Field::repeat, "must be at least 1");
  if (!(sweep.within >= 0 && sweep.within < 1)) throw Error(Field::within, "must be at least 0 and below 1");
  if (sweep.steps_per_run == 0) throw Error(Field::steps, "must be at least 1");
  std::vector<uint64_t> batches = sweep.batches;
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  if (batches.front() == 0) throw Error(Field::batches, "a batch size must be at least 1");
  const ThroughputParser parser(sweep.throughput_pattern);
  rows_per_step(sweep.rows_per_step, 1);  // validates the expression before anything runs

  SweepResult result;
  for (uint64_t batch : batches) {
    const double rows = static_cast<double>(rows_per_step(sweep.rows_per_step, batch));
    SweepPoint point;
    point.batch = batch;
    bool printed_all = true;
    bool stop = false;
    for (unsigned run = 0; run < sweep.warmup + sweep.repeat && !stop; ++run) {
      std::optional<double> printed;
      const Trial t = run_trial(runner, trial, batch, observer, [&](Stream, std::string_view line) {
        if (auto v = parser.parse(line, rows)) printed = v;
      });
      point.seconds += t.seconds;
      switch (t.outcome) {
        case TrialOutcome::ok:
          break;
        case TrialOutcome::oom:
          point.oom = true;
          result.end = SweepEnd::oom;
          stop = true;
          continue;
        case TrialOutcome::failed:
        case TrialOutcome::timed_out:
          result.end = SweepEnd::failed;
          result.failure = t;
          stop = true;
          continue;
        case TrialOutcome::interrupted:
          result.end = SweepEnd::interrupted;
          stop = true;
          continue;
      }
      if (run < sweep.warmup) continue;
      if (printed) {
        point.runs.push_back(*printed);
      } else if (!t.timed_out && t.seconds > 0) {  // a run stopped at the timeout has no meaningful wall time
        printed_all = false;
        point.runs.push_back(rows * static_cast<double>(sweep.steps_per_run) / t.seconds);
      }
    }
    if (!point.runs.empty()) {
      point.throughput = median(point.runs);
      point.source = printed_all ? ThroughputSource::printed : ThroughputSource::wall_time;
    }
    // A failed or interrupted batch has no point of its own; an OOM one does (it marks the edge).
    if (result.end == SweepEnd::done || result.end == SweepEnd::oom) result.points.push_back(point);
    if (stop) break;
  }
  result.bend = find_bend(result.points, sweep.within);
  for (const SweepPoint& p : result.points)
    if (p.throughput && (!result.best || *p.throughput > *result.best)) result.best = p.throughput;
  return result;
}

}  // namespace memplan
