// diff_plans: terms and GPUs matched by name, changes signed, and "fitted before, not now" found.
#include <catch2/catch.hpp>

#include "core/diagnose/plan_diff.hpp"

using namespace memplan;

namespace {

DiffSide side(uint64_t activations, int64_t spare_t4, Verdict t4) {
  DiffSide s;
  s.terms = {{"parameters", 14'000'000'000}, {"activations", activations}, {"overhead", 536'870'912}};
  s.total_bytes = 14'000'000'000 + activations;
  s.required_bytes = s.total_bytes + 536'870'912;
  s.gpus = {{"t4", 15'842'934'784, s.required_bytes, spare_t4, t4},
            {"h100-80gb", 85'029'027'840, s.required_bytes, 1, Verdict::fits}};
  return s;
}

}  // namespace

TEST_CASE("diff: a grown term and a GPU that no longer fits", "[diff]") {
  const PlanDiff d = diff_plans(side(1'000'000'000, 305'064'872, Verdict::tight),
                                side(2'000'000'000, -694'935'128, Verdict::no));
  REQUIRE(d.terms.size() == 3);
  CHECK(d.terms[1].name == "activations");
  CHECK(d.terms[1].change_bytes() == 1'000'000'000);
  CHECK_FALSE(d.terms[0].changed());
  CHECK(d.total.change_bytes() == 1'000'000'000);
  CHECK(d.required.change_bytes() == 1'000'000'000);
  REQUIRE(d.gpus.size() == 2);
  CHECK(d.gpus[0].became_no_fit());  // tight counts as fitting
  CHECK_FALSE(d.gpus[1].became_no_fit());
  CHECK(d.any_became_no_fit());
}

TEST_CASE("diff: the other way is no regression, GPUs only on one side are listed, not judged", "[diff]") {
  DiffSide a = side(2'000'000'000, -694'935'128, Verdict::no),
           b = side(1'000'000'000, 305'064'872, Verdict::fits);
  b.gpus.pop_back();
  b.gpus.push_back({"a100-80gb", 84'928'364'544, b.required_bytes, 1, Verdict::fits});
  const PlanDiff d = diff_plans(a, b);
  CHECK_FALSE(d.any_became_no_fit());
  REQUIRE(d.gpus.size() == 3);
  CHECK(d.gpus[0].verdict_changed());
  CHECK(d.gpus[1].id == "h100-80gb");
  CHECK_FALSE(d.gpus[1].new_gpu);
  CHECK(d.gpus[2].id == "a100-80gb");
  CHECK_FALSE(d.gpus[2].old_gpu);
  CHECK(d.terms[1].change_bytes() == -1'000'000'000);
}

TEST_CASE("diff: a fit-only side has no terms, so none are compared", "[diff]") {
  DiffSide fit_only = side(1, 1, Verdict::fits);
  fit_only.terms.clear();
  CHECK(diff_plans(fit_only, side(2, 1, Verdict::fits)).terms.empty());
}

TEST_CASE("issue 32: diff matches 20,000 breakdown keys and fit rows by name, each once") {
  // Old has keys k0..k19999 with bytes i; new has the same keys with bytes 2*i, listed in reverse.
  // Each change is then 2*i - i = i, and no key is "only in one side".
  const size_t n = 20'000;
  DiffSide a, b;
  for (size_t i = 0; i < n; ++i) {
    a.terms.push_back({"k" + std::to_string(i), i});
    b.terms.push_back({"k" + std::to_string(n - 1 - i), 2 * (n - 1 - i)});
    a.gpus.push_back({"g" + std::to_string(i), 100, 1, 99, Verdict::fits});
    b.gpus.push_back({"g" + std::to_string(n - 1 - i), 100, 1, 99, Verdict::fits});
  }
  const PlanDiff d = diff_plans(a, b);
  REQUIRE(d.terms.size() == n);
  REQUIRE(d.gpus.size() == n);
  CHECK(d.terms[12'345].name == "k12345");
  CHECK(d.terms[12'345].change_bytes() == 12'345);
  CHECK(d.gpus[777].id == "g777");
  CHECK(d.gpus[777].new_gpu.has_value());
}
