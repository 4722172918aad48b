// The out-of-memory readers against real messages (tests/data/oom_messages/, each cited in
// SOURCES.md): every number is the one printed in the message, converted by hand here.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include <memplan/error.hpp>
#include "cli/render_oom.hpp"
#include "core/base/terminal_text.hpp"
#include "core/diagnose/oom_message.hpp"

using namespace memplan;

namespace {

constexpr double GiB = 1073741824.0, k_oom_mib = 1048576.0;

uint64_t b(double v) { return static_cast<uint64_t>(v + 0.5); }

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(MEMPLAN_TEST_DATA_DIR) + "/oom_messages/" + name);
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

OomMessage only(const std::string& name) {
  const std::vector<OomMessage> m = parse_oom_messages(fixture(name));
  REQUIRE(m.size() == 1);
  return m.front();
}

}  // namespace

TEST_CASE("printed sizes: PyTorch's format_size units", "[oom]") {
  CHECK(parse_printed_size("0 bytes") == 0u);
  CHECK(parse_printed_size("2.26 GiB") == b(2.26 * GiB));
  CHECK(parse_printed_size("781.59 MiB;") == b(781.59 * k_oom_mib));
  CHECK(parse_printed_size("12.00 KiB") == 12288u);
  size_t used = 0;
  CHECK(parse_printed_size("144817.04 MiB on device 0", &used) == b(144817.04 * k_oom_mib));
  CHECK(used == 13);
  CHECK_FALSE(parse_printed_size("GiB"));
  CHECK_FALSE(parse_printed_size("2.26GiB"));
  CHECK_FALSE(parse_printed_size("2.26 parsecs"));
  CHECK_FALSE(parse_printed_size("99999999999999999999 GiB"));
}

TEST_CASE("PyTorch, older wording: (GPU 0, total, allocated, free, reserved)", "[oom]") {
  const OomMessage m = only("pytorch_2021_free_but_failed.txt");
  CHECK(m.kind == OomKind::pytorch);
  CHECK(m.older_wording);
  CHECK(m.device == 0);
  CHECK(m.requested == b(2.26 * GiB));
  CHECK(m.total == b(6.00 * GiB));
  CHECK(m.allocated == b(781.59 * k_oom_mib));
  CHECK(m.free == b(3.03 * GiB));
  CHECK(m.reserved == b(1.24 * GiB));
  const OomReading r = read_pytorch_oom(m);
  CHECK(r.free_but_failed);  // 3.03 GiB free >= 2.26 GiB asked
  CHECK_FALSE(r.shortfall);
  CHECK(r.reserved_unallocated == b(1.24 * GiB) - b(781.59 * k_oom_mib));
  CHECK(r.outside_allocator == b(6.00 * GiB) - b(3.03 * GiB) - b(1.24 * GiB));
}

TEST_CASE("PyTorch, oldest wording: cached", "[oom]") {
  const OomMessage m = only("pytorch_2019_cached.txt");
  CHECK(m.cached_wording);
  CHECK(m.reserved == b(4.68 * k_oom_mib));
  CHECK(m.requested == b(12.50 * k_oom_mib));
}

TEST_CASE("PyTorch: a model that fills the GPU is short, not fragmented", "[oom]") {
  const OomReading r = read_pytorch_oom(only("pytorch_2020_full.txt"));
  CHECK_FALSE(r.fragmentation);
  REQUIRE(r.shortfall);
  // 128.00 MiB asked; 24.81 MiB free + (10.86 GiB - 10.85 GiB) cached
  CHECK(*r.shortfall == b(128 * k_oom_mib) - b(24.81 * k_oom_mib) - (b(10.86 * GiB) - b(10.85 * GiB)));
}

TEST_CASE("PyTorch: reserved but unallocated larger than the request is fragmentation", "[oom]") {
  const OomMessage m = only("pytorch_2020_reserved_unused.txt");
  const OomReading r = read_pytorch_oom(m);
  CHECK(r.fragmentation);  // 12.53 - 1.06 GiB idle in the cache, 10.84 GiB asked
  CHECK_FALSE(r.shortfall);
}

TEST_CASE("PyTorch, newer wording with this process and the expandable_segments hint", "[oom]") {
  const OomMessage m = only("pytorch_2024_fragmentation.txt");
  CHECK_FALSE(m.older_wording);
  CHECK(m.total == b(31.47 * GiB));
  CHECK(m.free == b(12.73 * GiB));
  CHECK(m.process_in_use == b(18.73 * GiB));
  CHECK(m.allocated == b(9.08 * GiB));
  CHECK(m.reserved_unallocated == b(9.35 * GiB));
  const OomReading r = read_pytorch_oom(m);
  CHECK(r.fragmentation);  // 9.35 of 18.43 GiB reserved is idle
  CHECK(r.shortfall == b(22.78 * GiB) - b(12.73 * GiB) - b(9.35 * GiB));
  CHECK(r.other_processes == b(31.47 * GiB) - b(12.73 * GiB) - b(18.73 * GiB));
  CHECK(r.process_non_pytorch == b(18.73 * GiB) - b(9.08 * GiB) - b(9.35 * GiB));
}

TEST_CASE("PyTorch, newer wording: 'capacty', 'Process N has', request over the GPU", "[oom]") {
  const OomMessage c = only("pytorch_2023_capacty.txt");
  CHECK(c.total == b(6.00 * GiB));
  CHECK(c.free == 0u);
  const OomMessage p = only("pytorch_2024_process_pid.txt");
  REQUIRE(p.processes.size() == 1);
  CHECK(p.processes[0].first == 20398u);
  CHECK(p.processes[0].second == b(14.52 * GiB));
  const OomReading big = read_pytorch_oom(only("pytorch_2024_request_over_gpu.txt"));
  CHECK(big.request_exceeds_gpu);  // 55.57 GiB asked of 12.00 GiB
  CHECK_FALSE(big.fragmentation);
  CHECK(read_pytorch_oom(only("pytorch_2023_allocated_over_total.txt")).allocated_exceeds_total);
}

TEST_CASE("vLLM: max seq len over the KV cache, V0 and V1, and no cache blocks", "[oom]") {
  const OomMessage v0 = only("vllm_max_seq_len.txt");
  CHECK(v0.kind == OomKind::vllm_max_seq_len);
  CHECK(v0.max_seq_len == 4096u);
  CHECK(v0.kv_tokens == 3664u);
  CHECK(v0.line == 2);
  const OomMessage v1 = only("vllm_v1_kv_needed.txt");
  CHECK(v1.kind == OomKind::vllm_kv_needed);
  CHECK(v1.max_seq_len == 131072u);
  CHECK(v1.kv_needed == b(16.00 * GiB));
  CHECK(v1.kv_available == b(0.71 * GiB));
  CHECK(v1.estimated_max_len == 5632u);
  // The traceback's `raise` line and the error line are one message.
  CHECK(only("vllm_no_cache_blocks.txt").kind == OomKind::vllm_no_cache_blocks);
}

TEST_CASE("llama.cpp: which buffer failed, its exact size", "[oom]") {
  const OomMessage w = only("llamacpp_model_buffer.txt");
  CHECK(w.buffer == LlamaBuffer::weights);
  CHECK(w.buffer_bytes == 151851674624u);
  CHECK(w.buffer_device == "CUDA0");
  const OomMessage c = only("llamacpp_compute_buffer.txt");
  CHECK(c.buffer == LlamaBuffer::compute);
  CHECK(c.buffer_bytes == 150995968u);  // = 144.00 MiB
  CHECK(c.buffer_device == "CUDA4");
  const OomMessage k = only("llamacpp_kv_cache.txt");
  CHECK(k.buffer == LlamaBuffer::kv_cache);
  CHECK(k.buffer_bytes == b(4480 * k_oom_mib));
  CHECK(k.buffer_device == "CUDA3");
}

TEST_CASE("oom messages: repeats counted once, text without one gives none, hostile text is bounded",
          "[oom]") {
  const std::string one =
      "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 1: cudaMalloc "
      "failed: out of memory\nggml_gallocr_reserve_n: failed to allocate CUDA1 buffer of size "
      "10345253120\n";
  CHECK(parse_oom_messages(one + one + one).size() == 1);
  CHECK(parse_oom_messages("all good\nloss 0.3\n").empty());
  CHECK(parse_oom_messages("").empty());
  const std::string digits(100000, '9');
  CHECK(parse_oom_messages("CUDA out of memory. Tried to allocate " + digits + " GiB").empty());
  CHECK(parse_oom_messages("Tried to allocate 1.00 GiB (GPU 0;;;; out of memory").size() == 1);
}

TEST_CASE("issue 32: 20,000 distinct PyTorch messages keep the first k_max_oom_messages, count the rest") {
  // Line i (1-based) asks for i MiB: all distinct. 20,000 + 1 repeat of line 1 at the end.
  std::string log;
  for (int i = 1; i <= 20'000; ++i)
    log +=
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate " + std::to_string(i) + ".00 MiB.\n";
  log += "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 MiB.\n";
  size_t omitted = 0;
  const std::vector<OomMessage> m = parse_oom_messages(log, &omitted);
  REQUIRE(m.size() == k_max_oom_messages);
  CHECK(m[0].requested == uint64_t{1} * 1'048'576);
  CHECK(m[99].requested == uint64_t{100} * 1'048'576);
  CHECK(m[99].line == 100);
  CHECK(omitted == 20'001 - k_max_oom_messages);  // every message after the kept ones
}

TEST_CASE("issue 32: a repeated message is kept once, a differing one is kept") {
  const std::string log =
      "allocating 10.00 MiB on device 0: cudaMalloc failed: out of memory\n"
      "allocating 10.00 MiB on device 0: cudaMalloc failed: out of memory\n"
      "allocating 10.00 MiB on device 1: cudaMalloc failed: out of memory\n";
  size_t omitted = 7;
  const std::vector<OomMessage> m = parse_oom_messages(log, &omitted);
  REQUIRE(m.size() == 2);
  CHECK(m[0].buffer_device == "CUDA0");
  CHECK(m[1].buffer_device == "CUDA1");
  CHECK(omitted == 0);
}

TEST_CASE("issue 32: a buffer name's terminal escapes and length do not reach the title raw") {
  const std::string log = "alloc_tensor_range: failed to allocate \x1B]0;pwned\x07 buffer of size 1000\n";
  const std::vector<OomMessage> m = parse_oom_messages(log);
  REQUIRE(m.size() == 1);
  const std::string title = cli::oom_title(m[0]);
  CHECK(title.find('\x1B') == std::string::npos);
  CHECK(title.find('\x07') == std::string::npos);
  CHECK(title.find("on \\x1B]0;pwned\\x07") != std::string::npos);

  // A 100,000-byte name: its first 120 bytes, then its length.
  OomMessage big = m[0];
  big.buffer_device = std::string(100'000, 'a');
  const std::string t = cli::oom_title(big);
  CHECK(t.find(std::string(120, 'a') + "... (100000 bytes)") != std::string::npos);
  CHECK(t.size() < 300);
}

TEST_CASE("issue 32: terminal_field escapes control bytes and cuts overlong text with its length") {
  CHECK(terminal_field("gpu\x1B[2J") == "gpu\\x1B[2J");
  // 200 bytes cut at 8: the 8 bytes, then "... (200 bytes)".
  CHECK(terminal_field(std::string(200, 'a'), 8) == "aaaaaaaa... (200 bytes)");
  CHECK(terminal_field("short", 8) == "short");
}

TEST_CASE("issue 32: a GPU index above INT_MAX is refused, not wrapped") {
  // 4294967295 = 2^32 - 1 printed "GPU -1" as an int; INT_MAX = 2147483647 is still read.
  CHECK_THROWS_AS(parse_oom_messages("CUDA out of memory. Tried to allocate 2.00 MiB (GPU 4294967295; "
                                     "6.00 GiB total capacity)\n"),
                  Error);
  const auto m = parse_oom_messages(
      "CUDA out of memory. Tried to allocate 2.00 MiB (GPU 2147483647; "
      "6.00 GiB total capacity)\n");
  REQUIRE(m.size() == 1);
  CHECK(m[0].device == 2147483647);
}

TEST_CASE("issue 32: sums of sizes near 2^64 are refused, not wrapped") {
  // 16,000,000 TiB = 16e6 * 2^40 = 17,592,186,044,416,000,000 bytes; two of them exceed
  // 2^64 = 18,446,744,073,709,551,616.
  const std::string line =
      "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 16000000 TiB of "
      "which 16000000 TiB is free. Of the allocated memory 16000000 TiB is allocated by PyTorch, and "
      "16000000 TiB is reserved by PyTorch but unallocated.\n";
  CHECK_THROWS_AS(parse_oom_messages(line), OverflowError);
}
