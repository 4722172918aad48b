#include <catch2/catch.hpp>

#include <memplan/error.hpp>
#include "core/trials/ladder.hpp"

#include "fake_process_runner.hpp"

using namespace memplan;
using memplan::test::FakeProcessRunner;
using memplan::test::FakeRun;

namespace {

TrialSettings settings(std::vector<std::string> extra_oom = {}) {
  TrialSettings s{{"python", "train.py", "--batch-size={batch}"},
                  std::chrono::milliseconds(0),
                  std::chrono::milliseconds(100),
                  false,
                  OomMatcher(extra_oom)};
  return s;
}

LadderSettings from(uint64_t start, uint64_t min = 1, bool refine = false, uint64_t step = 1) {
  LadderSettings l;
  l.start = start;
  l.min = min;
  l.refine = refine;
  l.step = step;
  return l;
}

}  // namespace

TEST_CASE("halving goes down by halves and stops at the minimum", "[ladder]") {
  CHECK(halving_sequence(1000, 8) == std::vector<uint64_t>{1000, 500, 250, 125, 62, 31, 15, 8});
  CHECK(halving_sequence(64, 1) == std::vector<uint64_t>{64, 32, 16, 8, 4, 2, 1});
  CHECK(halving_sequence(5, 5) == std::vector<uint64_t>{5});
  CHECK(halving_sequence(3, 4).empty());
}

TEST_CASE("refine picks a multiple of step strictly between success and OOM", "[ladder]") {
  CHECK(refine_midpoint(512, 1024, 1) == 768u);
  CHECK(refine_midpoint(64, 128, 8) == 96u);  // multiples 72..120, the middle one
  CHECK(refine_midpoint(512, 520, 8) == std::nullopt);
  CHECK(refine_midpoint(100, 101, 1) == std::nullopt);
  CHECK(refine_midpoint(100, 102, 1) == 101u);
}

TEST_CASE("ladder halves on OOM until a batch runs", "[ladder]") {
  FakeProcessRunner runner([](uint64_t b) { return test::saturating_trainer(b, 100); });
  const LadderResult r = run_ladder(runner, settings(), from(1024), nullptr);
  CHECK(runner.batches == std::vector<uint64_t>{1024, 512, 256, 128, 64});
  CHECK(r.end == LadderEnd::found);
  CHECK(r.largest_ok == 64u);
  CHECK(r.smallest_oom == 128u);
  REQUIRE(r.tries.size() == 5);
  CHECK(r.tries[0].oom());
  CHECK(r.tries[0].exit_code == 1);
  CHECK(r.tries[4].outcome == TrialOutcome::ok);
  CHECK(runner.argvs[1] == std::vector<std::string>{"python", "train.py", "--batch-size=512"});
}

TEST_CASE("ladder refine bisects between the last success and the last OOM", "[ladder]") {
  FakeProcessRunner runner([](uint64_t b) { return test::saturating_trainer(b, 100); });
  const LadderResult r = run_ladder(runner, settings(), from(1024, 1, true), nullptr);
  // By hand: ok 64, oom 128 -> 96 ok -> 112 oom -> 104 oom -> 100 ok -> 102 oom -> 101 oom.
  CHECK(runner.batches == std::vector<uint64_t>{1024, 512, 256, 128, 64, 96, 112, 104, 100, 102, 101});
  CHECK(r.largest_ok == 100u);
  CHECK(r.smallest_oom == 101u);
  CHECK(r.end == LadderEnd::found);

  FakeProcessRunner stepped([](uint64_t b) { return test::saturating_trainer(b, 100); });
  const LadderResult s = run_ladder(stepped, settings(), from(1024, 1, true, 8), nullptr);
  CHECK(stepped.batches == std::vector<uint64_t>{1024, 512, 256, 128, 64, 96, 112, 104});
  CHECK(s.largest_ok == 96u);
}

TEST_CASE("ladder reports none fit when every batch down to the minimum runs out of memory", "[ladder]") {
  FakeProcessRunner runner([](uint64_t b) { return test::saturating_trainer(b, 0); });
  const LadderResult r = run_ladder(runner, settings(), from(1000, 8), nullptr);
  CHECK(runner.batches == std::vector<uint64_t>{1000, 500, 250, 125, 62, 31, 15, 8});
  CHECK(r.end == LadderEnd::none_fit);
  CHECK_FALSE(r.largest_ok);
}

TEST_CASE("a failure that is not OOM stops the ladder instead of halving", "[ladder]") {
  FakeProcessRunner runner([](uint64_t b) {
    if (b == 256) {
      FakeRun r;
      r.exit_code = 1;
      r.err = {"Traceback (most recent call last):", "ValueError: bad shape"};
      return r;
    }
    return test::saturating_trainer(b, 100);
  });
  const LadderResult r = run_ladder(runner, settings(), from(1024), nullptr);
  CHECK(runner.batches == std::vector<uint64_t>{1024, 512, 256});
  CHECK(r.end == LadderEnd::failed);
  CHECK(r.tries.back().outcome == TrialOutcome::failed);
  CHECK(r.tries.back().stderr_tail.back() == "ValueError: bad shape");
}

TEST_CASE("OOM classification: patterns, streams, exit codes", "[ladder]") {
  auto classify = [](FakeRun run, std::vector<std::string> extra = {}, bool timeout_ok = false) {
    FakeProcessRunner runner([run](uint64_t) { return run; });
    TrialSettings s = settings(extra);
    s.timeout_is_ok = timeout_ok;
    return run_trial(runner, s, 8, nullptr);
  };
  FakeRun oom_stdout;
  oom_stdout.exit_code = 1;
  oom_stdout.out = {"RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB"};  // torch 1.x, via 2>&1
  CHECK(classify(oom_stdout).outcome == TrialOutcome::oom);

  FakeRun cublas;
  cublas.exit_code = 1;
  cublas.err = {"RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"};
  CHECK(classify(cublas).outcome == TrialOutcome::oom);

  FakeRun jax;
  jax.exit_code = 1;
  jax.err = {
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate"};
  CHECK(classify(jax).outcome == TrialOutcome::failed);
  CHECK(classify(jax, {"RESOURCE_EXHAUSTED"}).outcome == TrialOutcome::oom);
  CHECK(classify(jax, {"Out of memory .* allocate$"}).outcome == TrialOutcome::oom);

  FakeRun recovered;  // printed an OOM, caught it, finished: it ran
  recovered.out = {std::string(test::torch_oom_line())};
  CHECK(classify(recovered).outcome == TrialOutcome::ok);

  FakeRun hung;
  hung.timed_out = true;
  hung.exit_code = 137;
  CHECK(classify(hung).outcome == TrialOutcome::timed_out);
  CHECK(classify(hung, {}, true).outcome == TrialOutcome::ok);
  hung.err = {std::string(test::torch_oom_line())};  // one rank OOMed, the others hang
  CHECK(classify(hung, {}, true).outcome == TrialOutcome::oom);

  FakeRun stopped;
  stopped.interrupted = true;
  stopped.exit_code = 130;
  CHECK(classify(stopped).outcome == TrialOutcome::interrupted);

  CHECK_THROWS_WITH(OomMatcher({"(unclosed"}),
                    Catch::StartsWith("oom_pattern: \"(unclosed\" is not a regular expression"));
}

TEST_CASE("timeouts and Ctrl-C end the ladder with what was found", "[ladder]") {
  FakeProcessRunner runner([](uint64_t b) {
    FakeRun r = test::saturating_trainer(b, 100);
    if (b == 64) r.interrupted = true;
    return r;
  });
  const LadderResult r = run_ladder(runner, settings(), from(256), nullptr);
  CHECK(r.end == LadderEnd::interrupted);
  CHECK(runner.batches == std::vector<uint64_t>{256, 128, 64});

  FakeProcessRunner slow([](uint64_t b) {
    FakeRun run = test::saturating_trainer(b, 100);
    if (b == 96) run.timed_out = true, run.exit_code = 143, run.out.clear();
    return run;
  });
  const LadderResult t = run_ladder(slow, settings(), from(128, 1, true), nullptr);
  CHECK(slow.batches == std::vector<uint64_t>{128, 64, 96});
  CHECK(t.end == LadderEnd::failed);
  CHECK(t.largest_ok == 64u);
}

TEST_CASE("ladder refuses impossible settings", "[ladder]") {
  FakeProcessRunner runner([](uint64_t b) { return test::saturating_trainer(b, 100); });
  CHECK_THROWS_WITH(run_ladder(runner, settings(), from(4, 8), nullptr), "start: 4 is below min 8");
  CHECK_THROWS_WITH(run_ladder(runner, settings(), from(0), nullptr), "start: must be at least 1");
  CHECK(runner.batches.empty());
}
