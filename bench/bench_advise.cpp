// advise() in-process: the README's example (llama-2-7b, fp32, AdamW, batch 16 x seq 2048 on an
// RTX 4090), the library call alone and the whole command. scripts/bench-cli.sh times the cold
// process; docs/performance.md has the figures.
//   build-bench/bench/memplan_bench_advise
#include <benchmark/benchmark.h>

#include <sstream>
#include <string>
#include <vector>

#include <memplan/optimizer.hpp>
#include <memplan/presets.hpp>
#include <memplan/recipe.hpp>
#include "core/planning/advise.hpp"

#include "cli/cli.hpp"

using namespace memplan;

namespace {

void BM_advise(benchmark::State& state) {
  EstimateRequest r;
  r.model = find_model(builtin_presets(), "--model", "llama-2-7b").model;
  r.recipe = parse_recipe("--precision", "fp32");
  r.optimizer = parse_optimizer("--optimizer", "adamw");
  r.batch = 16;
  r.seq = 2048;
  const GpuSpec& gpu = find_gpu(builtin_presets(), "--gpu", "rtx-4090");
  std::size_t tried = 0;
  for (auto _ : state) {
    Advice a = advise(r, gpu, builtin_presets().gpus);
    tried = a.candidates_tried;
    benchmark::DoNotOptimize(a.singles.data());
  }
  state.counters["candidates"] = static_cast<double>(tried);
}
BENCHMARK(BM_advise)->Unit(benchmark::kMillisecond);

void BM_cli_advise(benchmark::State& state) {
  const std::vector<std::string> args = {"advise",      "--model", "llama-2-7b", "--precision", "fp32",
                                         "--optimizer", "adamw",   "--batch",    "16",          "--seq",
                                         "2048",        "--gpu",   "rtx-4090"};
  for (auto _ : state) {
    std::ostringstream out, err;
    const int code = cli::run(args, out, err, false);
    benchmark::DoNotOptimize(code);
    if (code != 0) {
      state.SkipWithError(("exit " + std::to_string(code) + ": " + err.str()).c_str());
      break;
    }
  }
}
BENCHMARK(BM_cli_advise)->Unit(benchmark::kMillisecond);

}  // namespace
BENCHMARK_MAIN();
