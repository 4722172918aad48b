// SGLang's rules by release (core/serving/sglang_versions.hpp): each row's default
// mem_fraction_static, chunked_prefill_size and cuda_graph_max_bs, worked by hand from the row's
// server_args.py / memory_hook.py, and the tp set-up's parts (sglang_comm.hpp).
#include <catch2/catch.hpp>
#include <cmath>

#include "core/serving/sglang_comm.hpp"
#include "core/serving/sglang_versions.hpp"

using namespace memplan;

namespace {

SglangRules sgl_rules(uint32_t minor, uint32_t patch) {
  const auto r = sglang_rules_for(VllmVersion{0, minor, patch});
  REQUIRE(r);
  return *r;
}

double sgl_fraction(uint32_t minor, uint32_t patch, uint64_t mib, uint64_t tp) {
  const SglangRules r = sgl_rules(minor, patch);
  const SglangGpuDefaults d = sglang_gpu_defaults(r, mib, tp);
  return sglang_default_fraction(r, mib, tp, 1, d.chunked_prefill_size, d.cuda_graph_max_bs, false).fraction;
}

}  // namespace

TEST_CASE("sglang rules: rows by release and the newest as the default", "[sglang][versions]") {
  CHECK_FALSE(sglang_rules_for(VllmVersion{0, 2, 15}));
  CHECK(std::string(sgl_rules(3, 6).label) == "0.3.6.post3");
  CHECK(std::string(sgl_rules(4, 3).label) == "0.4.4.post4");
  CHECK(std::string(sgl_rules(4, 9).label) == "0.4.7.post1");
  CHECK(std::string(sgl_rules(5, 2).label) == "0.4.7.post1");  // 0.5.1 and 0.5.2 keep 0.4.7's buckets
  CHECK(std::string(sgl_rules(5, 9).label) == "0.5.4");
  CHECK(std::string(sglang_newest_rules().label) == "0.5.23");
  CHECK(sglang_rules_table().size() >= 4);
  for (const SglangRules& r : sglang_rules_table())
    CHECK(std::string(r.source).find(".py") != std::string::npos);
}

TEST_CASE("sglang rules: the default mem_fraction_static of each row", "[sglang][versions]") {
  // 0.3.6.post3: 0.82 from tp 8; 0.4: 0.81.
  CHECK(sgl_fraction(3, 6, 81559, 8) == 0.82);
  CHECK(sgl_fraction(4, 3, 81559, 8) == 0.81);
  CHECK(sgl_fraction(4, 3, 81559, 4) == 0.85);
  // 0.4.5.post3 on an H200 (143,771 MiB): (143,771 - 13,312) / 143,771, not rounded.
  CHECK(std::fabs(sgl_fraction(4, 5, 143771, 1) - (143771.0 - 13312.0) / 143771.0) < 1e-12);
  // 0.4.6.post5: 0.88 above 81,920 MiB, then min(0.88 + 48 GiB x 0.12 / mem, (mem - 18 GiB) / mem).
  CHECK(std::fabs(sgl_fraction(4, 6, 143771, 1) - (143771.0 - 18432.0) / 143771.0) < 1e-12);
  // 0.4.7.post1 on an H100 (81,559 MiB) at tp 1: (9.5 + 1 / 2) GiB = 10,240 MiB: 0.874.
  CHECK(sgl_fraction(4, 7, 81559, 1) == 0.874);
  // 0.5.4 (PR #10975): 13,440 MiB: 0.835.
  CHECK(sgl_fraction(5, 4, 81559, 1) == 0.835);
  // 0.5.10: + 58 prefill graph sizes up to 8192 x 8 MiB = 464 MiB: 13,904 MiB: 0.830.
  CHECK(sglang_piecewise_sizes(8192) == 58);
  CHECK(sglang_piecewise_sizes(4096) == 50);
  CHECK(sglang_piecewise_sizes(2048) == 42);
  CHECK(sgl_fraction(5, 10, 81559, 1) == 0.83);
  // 0.5.23 on an RTX 4090 (24,564 MiB): chunk 4096, bs 48: 512 + 6144 + 96 + 128 + 400 = 7,280 MiB: 0.704.
  CHECK(sgl_fraction(5, 23, 24564, 1) == 0.704);
  const SglangGpuDefaults d19 = sglang_gpu_defaults(sgl_rules(5, 19), 24564, 1);
  const SglangGpuDefaults d20 = sglang_gpu_defaults(sgl_rules(5, 20), 24564, 1);
  CHECK(d19.chunked_prefill_size == 2048);
  CHECK(d19.cuda_graph_max_bs == 24);
  CHECK(d20.chunked_prefill_size == 4096);
  CHECK(d20.cuda_graph_max_bs == 48);
  // MLA: the prefill graphs reserve a flat 1.5 GiB.
  const SglangRules r = sglang_newest_rules();
  CHECK(sglang_default_fraction(r, 81559, 1, 1, 8192, 256, true).piecewise_mib == 1536.0);
  // pp > 1 turns the prefill graphs off (_handle_piecewise_cuda_graph).
  CHECK(sglang_default_fraction(r, 81559, 1, 2, 8192, 256, false).piecewise_mib == 0.0);
}

TEST_CASE("sglang tp set-up: NCCL buffers and the custom all-reduce as named parts", "[sglang][versions]") {
  CHECK(sglang_comm_parts(1, 1, true).empty());
  const uint64_t per_connection = (4ull << 20) + 524288 + 4915200;
  // 4 x L4 over PCIe: NCCL only (custom all-reduce refused above 2 PCIe GPUs).
  const auto pcie = sglang_comm_parts(4, 1, false);
  REQUIRE(pcie.size() == 1);
  CHECK(pcie[0].bytes == 4 * 2 * per_connection);
  CHECK(pcie[0].assumed);
  // tp 2 on PCIe builds the custom all-reduce too.
  CHECK(sglang_comm_parts(2, 1, false).size() == 2);
  // 8 x H100: 32 channels, and the custom all-reduce's 10 + 8 + 20 MiB.
  const auto nvl = sglang_comm_parts(8, 1, true);
  REQUIRE(nvl.size() == 2);
  CHECK(nvl[0].bytes == 32 * 2 * per_connection);
  CHECK(nvl[1].bytes == 38ull << 20);
  CHECK_FALSE(nvl[1].assumed);
  CHECK(sglang_comm_parts(1, 2, true).size() == 1);  // the PP group's communicator
  CHECK_FALSE(sglang_gpu_nvlink("l4", "NVIDIA L4 24GB"));
  CHECK_FALSE(sglang_gpu_nvlink("a100-80gb-pcie", "NVIDIA A100 80GB PCIe"));
  CHECK_FALSE(sglang_gpu_nvlink("rtx-4090", "NVIDIA GeForce RTX 4090 24GB"));
  CHECK(sglang_gpu_nvlink("h100-80gb", "NVIDIA H100 80GB SXM5"));
  CHECK(sglang_gpu_nvlink("a100-80gb", "NVIDIA A100 80GB SXM4"));
}
