// The lesson's 7B table through memplan's public API: 7e9 parameters need 112,000,000,000 B for
// fp32 weights + gradients + AdamW's two fp32 states (16 B each), 56,000,000,000 B in fp16
// (8 B each), 14,000,000,000 B for fp16 inference (2 B each). Exits 1 when a number differs.
#include <cstdint>
#include <cstdio>
#include <exception>

#include <memplan/compute.hpp>
#include <memplan/error.hpp>
#include <memplan/estimate.hpp>
#include <memplan/optimizer.hpp>
#include <memplan/recipe.hpp>
#include <memplan/request.hpp>

namespace {

struct Row {
  const char* label;
  const char* precision;
  const char* optimizer;
  memplan::Mode mode;
  uint64_t expected;
};

uint64_t total_bytes(const Row& row) {
  memplan::EstimateRequest request;
  request.model.id = "custom";
  request.model.parameters = 7'000'000'000ull;
  request.recipe = memplan::parse_recipe("precision", row.precision);
  request.optimizer = memplan::parse_optimizer("optimizer", row.optimizer);
  request.mode = row.mode;
  request.attention = memplan::Attention::sdpa;  // typed fields, as an embedding program sets them
  request.checkpointing = memplan::Checkpointing::none;
  return memplan::estimate(request).total_bytes();
}

}  // namespace

int main() {
  const Row rows[] = {
      {"fp32 + AdamW", "fp32", "adamw", memplan::Mode::train, 112'000'000'000ull},
      {"fp16 + AdamW", "fp16", "adamw", memplan::Mode::train, 56'000'000'000ull},
      {"fp16 inference", "fp16", "none", memplan::Mode::infer, 14'000'000'000ull},
  };
  int failures = 0;
  try {
    for (const Row& row : rows) {
      const uint64_t got = total_bytes(row);
      const bool ok = got == row.expected;
      std::printf("%-16s %15llu B  %s\n", row.label, static_cast<unsigned long long>(got),
                  ok ? "ok" : "WRONG");
      if (!ok) {
        std::printf("  expected %llu B\n", static_cast<unsigned long long>(row.expected));
        ++failures;
      }
    }
  } catch (const std::exception& e) {
    std::printf("memplan_consumer: %s\n", e.what());
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
