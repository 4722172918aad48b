#pragma once
// A ProcessRunner that runs nothing: a script decides, from the batch size (MEMPLAN_BATCH in the
// request's environment), what the "command" printed and how it ended.

#include <functional>
#include <string>
#include <vector>

#include "exec/process.hpp"

namespace memplan::test {

struct FakeRun {
  int exit_code = 0;
  std::vector<std::string> out;  // lines on stdout
  std::vector<std::string> err;  // lines on stderr
  double seconds = 0.01;
  bool timed_out = false;
  bool interrupted = false;
};

class FakeProcessRunner : public ProcessRunner {
 public:
  using Script = std::function<FakeRun(uint64_t batch)>;
  explicit FakeProcessRunner(Script script) : m_script(std::move(script)) {}

  ProcessResult run(const ProcessRequest& request, const LineSink& sink) override {
    uint64_t batch = 0;
    for (const auto& [name, value] : request.extra_env)
      if (name == "MEMPLAN_BATCH") batch = std::stoull(value);
    argvs.push_back(request.argv);
    batches.push_back(batch);
    const FakeRun r = m_script(batch);
    for (const std::string& l : r.out)
      if (sink) sink(Stream::out, l);
    for (const std::string& l : r.err)
      if (sink) sink(Stream::err, l);
    ProcessResult p;
    p.exit_code = r.exit_code;
    p.seconds = r.seconds;
    p.timed_out = r.timed_out;
    p.interrupted = r.interrupted;
    p.stderr_tail = r.err;
    return p;
  }

  std::vector<std::vector<std::string>> argvs;  // every argv run, in order
  std::vector<uint64_t> batches;                // every batch run, in order

 private:
  Script m_script;
};

// PyTorch's message when an allocation fails (torch 2.x).
inline const char* torch_oom_line() {
  return "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
         "of 79.10 GiB of which 1.23 GiB is free.";
}

// A trainer that runs out of memory above `threshold` and otherwise prints "<rate> rows/s"
// with rate = 1000*b/(b+64).
inline FakeRun saturating_trainer(uint64_t batch, uint64_t threshold) {
  FakeRun r;
  if (batch > threshold) {
    r.exit_code = 1;
    r.err = {"Traceback (most recent call last):", torch_oom_line()};
    return r;
  }
  const double rate = 1000.0 * static_cast<double>(batch) / static_cast<double>(batch + 64);
  r.out = {"step 3/3", std::to_string(rate) + " rows/s"};
  return r;
}

}  // namespace memplan::test
