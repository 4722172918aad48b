#include <catch2/catch.hpp>

#include <memplan/error.hpp>
#include "core/trials/sweep.hpp"

#include "fake_process_runner.hpp"

using namespace memplan;
using memplan::test::FakeProcessRunner;
using memplan::test::FakeRun;

namespace {

TrialSettings sweep_settings() {
  return TrialSettings{{"./step.sh", "{batch}"},
                       std::chrono::milliseconds(0),
                       std::chrono::milliseconds(100),
                       false,
                       OomMatcher()};
}

SweepSettings batches(std::vector<uint64_t> b, unsigned warmup = 0, unsigned repeat = 1) {
  SweepSettings s;
  s.batches = std::move(b);
  s.warmup = warmup;
  s.repeat = repeat;
  return s;
}

// 1000*b/(b+64), the curve the fakes follow.
double curve(double b) { return 1000 * b / (b + 64); }

}  // namespace

TEST_CASE("throughput is read from the lines loops and tqdm print", "[sweep]") {
  const ThroughputParser p;
  CHECK(p.parse("step 10 | throughput: 812.5 rows/s", 64) == Approx(812.5));
  CHECK(p.parse("12 samples/s", 64) == Approx(12));
  CHECK(p.parse("1.5e3 samples/s", 64) == Approx(1500));
  CHECK(p.parse("100%|#####| 30/30 [00:10<00:00,  3.00it/s]", 64) == Approx(192));  // 3 steps/s * 64 rows
  CHECK(p.parse(" 40%|##   | 4/10 [00:10<00:15,  2.50s/it]", 64) == Approx(25.6));  // 64 rows / 2.5 s
  CHECK(p.parse("warm 10 rows/s then 20 rows/s", 64) == Approx(20));                // the last one counts
  CHECK_FALSE(p.parse("rows/s", 64));
  CHECK_FALSE(p.parse("loss 2.31 lr 3e-4", 64));
  CHECK_FALSE(p.parse("12 rows/sec", 64));

  const ThroughputParser custom(std::string("tok/s=([0-9.]+)"));
  CHECK(custom.parse("step 5 tok/s=51234.5 loss 3.1", 64) == Approx(51234.5));
  CHECK_FALSE(custom.parse("812.5 rows/s", 64));
  CHECK_THROWS_WITH(ThroughputParser(std::string("([0-9]")),
                    Catch::StartsWith("throughput_pattern: \"([0-9]\" is not a regular expression"));
}

TEST_CASE("rows per step from an expression", "[sweep]") {
  CHECK(rows_per_step("{batch}", 64) == 64u);
  CHECK(rows_per_step("{batch}*1024", 8) == 8192u);
  CHECK(rows_per_step("1024 * {batch}", 8) == 8192u);
  CHECK(rows_per_step("2048", 8) == 2048u);
  CHECK_THROWS_WITH(rows_per_step("0", 8), "rows_per_step: \"0\" must be at least 1");
  CHECK_THROWS_AS(rows_per_step("{batch}*", 8), Error);
  CHECK_THROWS_AS(rows_per_step("{size}", 8), Error);
}

TEST_CASE("the bend is the smallest batch within 10% of the best", "[sweep]") {
  // 1000*b/(b+64): 200, 333.3, 500, 666.7, 800, 888.9, 941.2. 90% of 941.2 is 847.1 -> 512.
  std::vector<SweepPoint> points;
  for (uint64_t b : {16, 32, 64, 128, 256, 512, 1024}) {
    SweepPoint p;
    p.batch = b;
    p.throughput = curve(static_cast<double>(b));
    points.push_back(p);
  }
  CHECK(find_bend(points, 0.10) == 5u);  // 512
  CHECK(find_bend(points, 0.20) == 4u);  // 80% of 941.2 is 752.9 -> 256
  CHECK(find_bend(points, 0.0) == 6u);   // the best itself
  SweepPoint oom;
  oom.batch = 2048;
  oom.oom = true;
  points.push_back(oom);
  CHECK(find_bend(points, 0.10) == 5u);
  CHECK_FALSE(find_bend({oom}, 0.10));
}

TEST_CASE("median and auto batches", "[sweep]") {
  CHECK(median({3, 1, 2}) == 2);
  CHECK(median({4, 1, 2, 3}) == 2.5);
  CHECK(median({}) == 0);
  CHECK(auto_batches(700) == std::vector<uint64_t>{8, 16, 32, 64, 128, 256, 512, 700});
  CHECK(auto_batches(1024) == std::vector<uint64_t>{16, 32, 64, 128, 256, 512, 1024});
  CHECK(auto_batches(3) == std::vector<uint64_t>{1, 2, 3});
  CHECK(auto_batches(0).empty());
}

TEST_CASE("sweep follows the curve, stops at the first OOM and marks the bend", "[sweep]") {
  FakeProcessRunner runner([](uint64_t b) { return test::saturating_trainer(b, 1024); });
  const SweepResult r =
      run_sweep(runner, sweep_settings(), batches({4096, 16, 32, 64, 128, 256, 512, 1024, 2048}, 1), nullptr);
  // Sorted, each batch twice (one warm-up), and nothing after the OOM at 2048 (which OOMs in warm-up).
  CHECK(runner.batches ==
        std::vector<uint64_t>{16, 16, 32, 32, 64, 64, 128, 128, 256, 256, 512, 512, 1024, 1024, 2048});
  REQUIRE(r.points.size() == 8);
  CHECK(r.points[0].throughput == Approx(200.0));
  CHECK(r.points[2].throughput == Approx(500.0));
  CHECK(r.points[6].throughput == Approx(941.176).epsilon(1e-4));
  CHECK(r.points[0].source == ThroughputSource::printed);
  CHECK(r.points[7].oom);
  CHECK_FALSE(r.points[7].throughput);
  CHECK(r.end == SweepEnd::oom);
  REQUIRE(r.bend);
  CHECK(r.points[*r.bend].batch == 512);
  CHECK(r.best == Approx(941.176).epsilon(1e-4));
}

TEST_CASE("sweep takes the median of repeats, and wall time when nothing is printed", "[sweep]") {
  int call = 0;
  FakeProcessRunner noisy([&call](uint64_t b) {
    FakeRun run;
    const double jitter[] = {1.0, 1.3, 0.9};  // median 1.0
    run.out = {std::to_string(curve(static_cast<double>(b)) * jitter[call++ % 3]) + " rows/s"};
    return run;
  });
  const SweepResult r = run_sweep(noisy, sweep_settings(), batches({64}, 0, 3), nullptr);
  REQUIRE(r.points.size() == 1);
  CHECK(r.points[0].runs.size() == 3);
  CHECK(r.points[0].throughput == Approx(500));

  FakeProcessRunner silent([](uint64_t b) {
    FakeRun run;
    run.seconds = 0.1 + static_cast<double>(b) / 1000;  // fixed 0.1 s plus 1 ms per row
    return run;
  });
  SweepSettings s = batches({100, 400}, 0);
  s.steps_per_run = 2;
  const SweepResult w = run_sweep(silent, sweep_settings(), s, nullptr);
  // rows per run / seconds: 200/0.2 = 1000, 800/0.5 = 1600.
  CHECK(w.points[0].throughput == Approx(1000));
  CHECK(w.points[1].throughput == Approx(1600));
  CHECK(w.points[1].source == ThroughputSource::wall_time);
}

TEST_CASE("sweep stops at a failure that is not OOM and reports it", "[sweep]") {
  FakeProcessRunner runner([](uint64_t b) {
    if (b == 64) {
      FakeRun run;
      run.exit_code = 2;
      run.err = {"step.sh: line 3: bench.py: No such file"};
      return run;
    }
    return test::saturating_trainer(b, 1024);
  });
  const SweepResult r = run_sweep(runner, sweep_settings(), batches({16, 32, 64, 128}), nullptr);
  CHECK(r.end == SweepEnd::failed);
  REQUIRE(r.failure);
  CHECK(r.failure->batch == 64);
  CHECK(r.points.size() == 2);
  CHECK(runner.batches == std::vector<uint64_t>{16, 32, 64});
}

TEST_CASE("sweep refuses impossible settings", "[sweep]") {
  FakeProcessRunner runner([](uint64_t b) { return test::saturating_trainer(b, 1024); });
  CHECK_THROWS_WITH(run_sweep(runner, sweep_settings(), batches({}), nullptr),
                    Catch::StartsWith("batches: is empty"));
  CHECK_THROWS_WITH(run_sweep(runner, sweep_settings(), batches({16}, 0, 0), nullptr),
                    "repeat: must be at least 1");
  CHECK(runner.batches.empty());
}
