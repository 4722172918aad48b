#include "core/trials/trial.hpp"

#include <memplan/error.hpp>

namespace memplan {

const char* outcome_name(TrialOutcome outcome) {
  switch (outcome) {
    case TrialOutcome::ok:
      return "ok";
    case TrialOutcome::oom:
      return "oom";
    case TrialOutcome::failed:
      return "failed";
    case TrialOutcome::timed_out:
      return "timeout";
    case TrialOutcome::interrupted:
      return "interrupted";
  }
  return "?";
}

const std::vector<std::string>& OomMatcher::builtin() {
  // PyTorch: "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ..." (older versions
  // "RuntimeError: CUDA out of memory"); cuBLAS failing to allocate its workspace.
  static const std::vector<std::string> patterns = {"CUDA out of memory", "OutOfMemoryError",
                                                    "CUBLAS_STATUS_ALLOC_FAILED"};
  return patterns;
}

OomMatcher::OomMatcher(const std::vector<std::string>& extra) {
  for (const std::string& pattern : extra) {
    if (pattern.empty()) throw Error(Field::oom_pattern, "is empty (expected a regular expression)");
    try {
      m_extra.emplace_back(pattern, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      throw Error(Field::oom_pattern, "\"" + pattern + "\" is not a regular expression (" + e.what() + ")");
    }
  }
}

bool OomMatcher::matches(std::string_view line) const {
  for (const std::string& p : builtin())
    if (line.find(p) != std::string_view::npos) return true;
  for (const std::regex& re : m_extra)
    if (std::regex_search(line.begin(), line.end(), re)) return true;
  return false;
}

Trial run_trial(ProcessRunner& runner, const TrialSettings& settings, uint64_t batch, TrialObserver* observer,
                const LineSink& also) {
  ProcessRequest request;
  request.argv = substitute_batch(settings.command, batch);
  request.extra_env = {{"MEMPLAN_BATCH", std::to_string(batch)}};
  request.timeout = settings.timeout;
  request.kill_grace = settings.kill_grace;

  Trial trial;
  trial.batch = batch;
  bool saw_oom = false;
  LineSink sink = [&](Stream stream, std::string_view text) {
    if (!saw_oom && settings.oom.matches(text)) {
      saw_oom = true;
      trial.oom_line = std::string(text);
    }
    if (observer) observer->line(batch, stream, text);
    if (also) also(stream, text);
  };
  if (observer) observer->started(batch, request.argv);
  const ProcessResult r = runner.run(request, sink);

  trial.exit_code = r.exit_code;
  trial.signal = r.signal;
  trial.seconds = r.seconds;
  trial.timed_out = r.timed_out;
  trial.stderr_tail = r.stderr_tail;
  if (r.interrupted)
    trial.outcome = TrialOutcome::interrupted;
  else if (r.timed_out)
    trial.outcome = saw_oom                  ? TrialOutcome::oom  // e.g. the other ranks hang after one OOMs
                    : settings.timeout_is_ok ? TrialOutcome::ok
                                             : TrialOutcome::timed_out;
  else if (r.exit_code == 0)
    trial.outcome = TrialOutcome::ok;
  else
    trial.outcome = saw_oom ? TrialOutcome::oom : TrialOutcome::failed;
  if (trial.outcome != TrialOutcome::oom) trial.oom_line.clear();
  if (observer) observer->finished(trial);
  return trial;
}

}  // namespace memplan
