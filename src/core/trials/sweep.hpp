#pragma once
// The throughput sweep (the lesson's batch-size bend): run the user's command at several batch
// sizes, read rows per second from what it prints (or from wall time), stop at the first OOM, and
// find the bend: the smallest batch within a few percent of the best throughput. Past the bend a
// bigger batch buys no speed and costs memory in a straight line.

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "core/trials/trial.hpp"

namespace memplan {

// Reads a throughput from one line of the command's output.
class ThroughputParser {
 public:
  // No pattern: the last number followed by rows/s, samples/s (taken as rows per second), it/s
  // (times rows per step) or s/it (rows per step divided by it), as tqdm and most loops print.
  // A pattern: an ECMAScript regex; its first capture group (or the whole match) is rows per
  // second. Throws Error(Field::throughput_pattern, ...) for a bad regex.
  explicit ThroughputParser(const std::optional<std::string>& pattern = std::nullopt);

  // Rows per second in `line`, or nullopt: ("812.5 rows/s", 64) -> 812.5; ("3.00it/s", 64) -> 192.
  std::optional<double> parse(std::string_view line, double rows_per_step) const;

 private:
  bool m_custom;
  std::regex m_regex;
};

// Rows per step from an expression: "{batch}", "2048", "{batch}*1024" (tokens), "1024*{batch}".
// Throws Error(Field::rows_per_step, ...) for anything else or zero.
uint64_t rows_per_step(const std::string& expression, uint64_t batch);

struct SweepSettings {
  std::vector<uint64_t> batches;  // tried in increasing order
  unsigned repeat = 1;            // measured runs per batch; the median is the throughput
  unsigned warmup = 1;            // runs per batch before those, discarded
  std::optional<std::string> throughput_pattern;
  std::string rows_per_step = "{batch}";  // see rows_per_step()
  uint64_t steps_per_run = 1;             // for wall-time throughput: rows per run = rows_per_step * steps
  double within = 0.10;                   // the bend: within this fraction of the best
};

enum class ThroughputSource { printed, wall_time, none };

// "printed", "wall_time", "none".
const char* source_name(ThroughputSource source);

struct SweepPoint {
  uint64_t batch = 0;
  bool oom = false;
  std::optional<double> throughput;  // rows per second, the median of the measured runs
  std::vector<double> runs;          // each measured run's rows per second
  ThroughputSource source = ThroughputSource::none;
  double seconds = 0;  // wall time of all its runs, warm-up included
};

enum class SweepEnd { done, oom, failed, interrupted };

struct SweepResult {
  std::vector<SweepPoint> points;  // in increasing batch order; the last is the OOM one when end == oom
  std::optional<size_t> bend;      // index into points
  std::optional<double> best;      // the highest throughput
  SweepEnd end = SweepEnd::done;
  std::optional<Trial> failure;  // the trial that failed, when end == failed
};

// The index of the smallest batch whose throughput is at least (1 - within) * best; nullopt
// when no point has a throughput. Points must be in increasing batch order.
std::optional<size_t> find_bend(const std::vector<SweepPoint>& points, double within);

// The median of `values` (the mean of the middle two for an even count); 0 for none.
double median(std::vector<double> values);

// Batch sizes for --batches auto: the `count` largest powers of two up to max_batch, then
// max_batch itself when it is not one: (700, 7) -> 8 16 32 64 128 256 512 700; empty for 0.
std::vector<uint64_t> auto_batches(uint64_t max_batch, size_t count = 7);

// Runs the sweep. Throws Error for bad settings and when the command cannot be started.
SweepResult run_sweep(ProcessRunner& runner, const TrialSettings& trial, const SweepSettings& sweep,
                      TrialObserver* observer);

}  // namespace memplan
