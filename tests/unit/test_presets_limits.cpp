// GPU presets outside sane bounds are refused (issue 13 item 7): a capacity above 16 TiB
// (2^64 - 1 bytes was accepted and its spare bytes clamped), and an empty "gpus" array (it
// silently dropped the fit table).
#include <catch2/catch.hpp>

#include <memplan/presets.hpp>

#include "error_of.hpp"

using namespace memplan;
using memplan::test::error_of;

TEST_CASE("gpu preset of 2^64-1 bytes is refused", "[presets][limits]") {
  CHECK(error_of([] {
          parse_presets(
              R"({"gpus":[{"id":"a","name":"A","source":"s","memory_total_bytes":18446744073709551615}]})",
              "", "x.json");
        }) ==
        "x.json: gpus[0] (a): field \"memory_total_bytes\" 18446744073709551615 is above the limit of "
        "17592186044416 bytes (16 TiB)");
  // 16 TiB itself is accepted: the limit is inclusive.
  const Presets p = parse_presets(
      R"({"gpus":[{"id":"a","name":"A","source":"s","memory_total_bytes":17592186044416}]})", "", "x");
  CHECK(p.gpus.at(0).memory_total_bytes == 17592186044416ull);
}

TEST_CASE("gpu presets: an empty gpus array is an error", "[presets][limits]") {
  CHECK(error_of([] { parse_presets(R"({"gpus":[]})", "", "x.json"); }) ==
        "x.json: \"gpus\" is empty (expected at least one GPU)");
}

TEST_CASE("every built-in GPU is within the memory limit", "[presets][limits]") {
  for (const GpuSpec& g : builtin_presets().gpus) CHECK(g.memory_total_bytes <= (16ull << 40));
}
