// Header read time vs file size: a 1 MiB and an 8 GiB model file (sparse, made with truncate(2),
// so they cost no disk) with the same 291 tensors. The reader touches only the header, so the
// two sizes should take the same time.
//   build/bench/memplan_bench_headers
#include <benchmark/benchmark.h>

#include <unistd.h>

#include "core/models/gguf.hpp"
#include "core/models/safetensors.hpp"

#include "model_file_builders.hpp"

using namespace memplan;
using namespace memplan::test;

namespace {

constexpr uint64_t k_tensors = 291;  // Mistral-7B's tensor count

std::string bench_dir() {
  static TempDir dir("bench_headers");
  return dir.path.string();
}

// A safetensors file of about `bytes` bytes: 291 BF16 tensors, header written, data sparse.
std::string make_safetensors(uint64_t bytes) {
  std::string path = bench_dir() + "/m" + std::to_string(bytes) + ".safetensors";
  uint64_t per = bytes / k_tensors / 2;
  std::vector<StTensor> ts;
  for (uint64_t i = 0; i < k_tensors; ++i)
    ts.push_back({"model.layers." + std::to_string(i) + ".weight", "BF16", {per}});
  uint64_t data = 0;
  std::string header = st_header(ts, data);
  std::string head = le64(header.size()) + header;
  std::ofstream(path, std::ios::binary).write(head.data(), static_cast<std::streamsize>(head.size()));
  if (::truncate(path.c_str(), static_cast<off_t>(head.size() + data)) != 0) std::abort();
  return path;
}

// A GGUF file of about `bytes` bytes: 291 F16 tensors, header written, data sparse.
std::string make_gguf(uint64_t bytes) {
  std::string path = bench_dir() + "/m" + std::to_string(bytes) + ".gguf";
  uint64_t per = bytes / k_tensors / 2 / 16 * 16;  // a multiple of 16 F16 = 32 bytes: no padding
  GgufBytes g;
  g.u32(0x46554747).u32(3).u64(k_tensors).u64(1).kv_str("general.architecture", "llama");
  for (uint64_t i = 0; i < k_tensors; ++i)
    g.tensor_info("blk." + std::to_string(i) + ".weight", {per}, 1, i * per * 2);
  g.pad(32);
  std::ofstream(path, std::ios::binary).write(g.b.data(), static_cast<std::streamsize>(g.b.size()));
  if (::truncate(path.c_str(), static_cast<off_t>(g.b.size() + k_tensors * per * 2)) != 0) std::abort();
  return path;
}

void BM_safetensors_header(benchmark::State& state) {
  uint64_t bytes = static_cast<uint64_t>(state.range(0)) << 20;
  std::string path = make_safetensors(bytes);
  for (auto _ : state) {
    SafetensorsModel m = read_safetensors_model(path);
    benchmark::DoNotOptimize(m.parameters);
  }
  state.counters["file_MiB"] = static_cast<double>(bytes >> 20);
}

void BM_gguf_header(benchmark::State& state) {
  uint64_t bytes = static_cast<uint64_t>(state.range(0)) << 20;
  std::string path = make_gguf(bytes);
  for (auto _ : state) {
    ModelSpec m = read_gguf(path);
    benchmark::DoNotOptimize(m.weight_bytes);
  }
  state.counters["file_MiB"] = static_cast<double>(bytes >> 20);
}

// A safetensors header of state.range(0) tensors, parsed in memory (no file): the parse must be
// linear in the header (issue 13: 100k tensors took 145 s when the JSON parser rescanned the
// object at each entry). Names as a real checkpoint's: "model.layers.<i>.mlp.down_proj.weight".
void BM_safetensors_header_tensors(benchmark::State& state) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  std::vector<StTensor> ts;
  ts.reserve(n);
  for (uint64_t i = 0; i < n; ++i)
    ts.push_back({"model.layers." + std::to_string(i / 8) + ".mlp.proj_" + std::to_string(i % 8) + ".weight",
                  "BF16",
                  {4096, 128}});
  uint64_t data = 0;
  const std::string header = st_header(ts, data);
  const std::string file = le64(header.size()) + header;  // the data bytes are not needed to parse
  const uint64_t claimed = file.size() + data;            // the file size the header's offsets need
  for (auto _ : state) {
    SafetensorsHeader h = parse_safetensors_header(file, claimed, "bench.safetensors");
    benchmark::DoNotOptimize(h.data_bytes);
  }
  state.counters["header_MiB"] = static_cast<double>(file.size()) / (1 << 20);
  state.counters["tensors"] = static_cast<double>(n);
}

}  // namespace

// 10k, 20k and 100k tensors (DeepSeek-V3's index lists about 90k).
BENCHMARK(BM_safetensors_header_tensors)->Arg(10000)->Arg(20000)->Arg(100000)->Unit(benchmark::kMillisecond);

// 1 MiB and 8 GiB.
BENCHMARK(BM_safetensors_header)->Arg(1)->Arg(8 << 10)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_gguf_header)->Arg(1)->Arg(8 << 10)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
