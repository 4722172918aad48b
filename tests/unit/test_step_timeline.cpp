// The step timeline against whole training steps measured with torch's profiler
// (tests/data/torch_cpu_step_peak.json: torch 1.13 on CPU, profile_memory=True, every allocation
// and free of forward, loss, backward, AdamW step and zero_grad(set_to_none=True);
// bench/measure_step_peak.py). memplan is given what a user would give (--device cpu, the
// architecture, the recipe, AdamW) and must land within 3% of the measured peak of step 2 (the
// optimizer state alive) and of step 1 (the state allocated inside optimizer.step()).

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "torch_reference_arch.hpp"

#include <memplan/estimate.hpp>
#include <memplan/lora.hpp>
#include <memplan/optimizer.hpp>
#include <memplan/recipe.hpp>

using namespace memplan;
using nlohmann::json;

namespace {

const json& step_doc() {
  static const json doc = [] {
    std::ifstream in(std::string(MEMPLAN_TEST_DATA_DIR) + "/torch_cpu_step_peak.json");
    REQUIRE(in.good());
    return json::parse(in);
  }();
  return doc;
}

EstimateRequest timeline_request_for(const json& c) {
  EstimateRequest r;
  r.device = Device::cpu;
  r.model.parameters = c.at("params").at("count");
  r.model.tensors = c.at("params").at("tensors");
  const json& a = c.at("arch");
  if (a.contains("mlp_widths")) {
    r.model.mlp_widths = a.at("mlp_widths").get<std::vector<uint64_t>>();
  } else {
    r.model.arch = test::arch_from(a);
    r.seq = c.at("seq");
  }
  r.batch = c.at("batch");
  r.recipe = parse_recipe("--precision", c.at("precision") == "autocast_bf16" ? "amp-bf16" : "fp32");
  r.optimizer = parse_optimizer("--optimizer", "adamw");
  r.attention = Attention::eager;
  if (c.value("checkpointing", "none") == "full") r.checkpointing = Checkpointing::full;
  r.grads_kept = c.value("zero_grad", "none") == "zeros";
  if (c.contains("lora")) {
    std::string list;
    for (const json& n : c.at("lora").at("targets")) list += (list.empty() ? "" : ",") + n.get<std::string>();
    r.lora = parse_lora_targets("--lora-targets", list, c.at("lora").at("rank"));
    r.trainable = static_cast<double>(c.at("params").at("trainable").get<uint64_t>()) /
                  static_cast<double>(r.model.parameters);
  }
  return r;
}

double timeline_error(uint64_t predicted, uint64_t measured) {
  return (static_cast<double>(predicted) - static_cast<double>(measured)) / static_cast<double>(measured);
}

std::string timeline_name_of(const json& c) {
  return c.at("id").get<std::string>() + " " + c.at("precision").get<std::string>() + " batch " +
         std::to_string(c.at("batch").get<uint64_t>());
}

}  // namespace

TEST_CASE("step peak: at least ten measured training steps", "[step_timeline]") {
  CHECK(step_doc().at("cases").size() >= 10);
}

TEST_CASE("step peak: steady state within 3% of the profiler's peak", "[step_timeline]") {
  for (const json& c : step_doc().at("cases")) {
    INFO(timeline_name_of(c));
    const Estimate e = estimate(timeline_request_for(c));
    REQUIRE(e.timeline.present);
    const uint64_t measured = c.at("step2").at("peak_bytes");
    INFO("predicted " << e.peak_bytes() << " measured " << measured << " error "
                      << timeline_error(e.peak_bytes(), measured) * 100 << "%");
    CHECK(std::fabs(timeline_error(e.peak_bytes(), measured)) <= 0.03);
    // The phase: the one measured, or one whose measured high point is within 3% of the peak
    // (two phases that close are one measurement's noise apart for a planner).
    const uint64_t at_phase = c.at("step2").at("phase_peak_bytes").at(to_string(e.timeline.peak_phase));
    INFO("measured phase " << c.at("step2").at("peak_phase").get<std::string>());
    CHECK(timeline_error(at_phase, measured) >= -0.03);
  }
}

TEST_CASE("step peak: step 1 within 3% (state allocated lazily)", "[step_timeline]") {
  for (const json& c : step_doc().at("cases")) {
    INFO(timeline_name_of(c));
    const Estimate e = estimate(timeline_request_for(c));
    const uint64_t measured = c.at("step1").at("peak_bytes");
    INFO("predicted " << e.timeline.first_step_peak_bytes << " measured " << measured);
    CHECK(std::fabs(timeline_error(e.timeline.first_step_peak_bytes, measured)) <= 0.03);
  }
}

TEST_CASE("step peak: weights, state and the end of the step match the live tensors", "[step_timeline]") {
  for (const json& c : step_doc().at("cases")) {
    INFO(timeline_name_of(c));
    const Estimate e = estimate(timeline_request_for(c));
    // After zero_grad only parameters and optimizer state are alive (and the gradients
    // zero_grad(set_to_none=False) keeps).
    const PhasePoint& end = e.timeline.at(Phase::zero_grad);
    CHECK(end.weights + end.optimizer_state + end.gradients == c.at("step2").at("end_bytes").get<uint64_t>());
  }
}

// Not run by default: prints the table of docs/accuracy.md ("Whole training steps").
//   build/tests/memplan_tests "[.step_table]"
TEST_CASE("step peak: the table for docs/accuracy.md", "[.step_table]") {
  std::printf(
      "| case | precision | batch | measured peak (step 2) | memplan | error | phase | step 1 measured | "
      "memplan | error |\n");
  std::printf("|---|---|---:|---:|---:|---:|---|---:|---:|---:|\n");
  for (const json& c : step_doc().at("cases")) {
    const Estimate e = estimate(timeline_request_for(c));
    const uint64_t m2 = c.at("step2").at("peak_bytes");
    const uint64_t m1 = c.at("step1").at("peak_bytes");
    std::printf("| %s | %s | %llu | %llu | %llu | %+.2f%% | %s (measured %s) | %llu | %llu | %+.2f%% |\n",
                c.at("id").get<std::string>().c_str(), c.at("precision").get<std::string>().c_str(),
                static_cast<unsigned long long>(c.at("batch").get<uint64_t>()),
                static_cast<unsigned long long>(m2), static_cast<unsigned long long>(e.peak_bytes()),
                100 * timeline_error(e.peak_bytes(), m2), to_string(e.timeline.peak_phase),
                c.at("step2").at("peak_phase").get<std::string>().c_str(),
                static_cast<unsigned long long>(m1),
                static_cast<unsigned long long>(e.timeline.first_step_peak_bytes),
                100 * timeline_error(e.timeline.first_step_peak_bytes, m1));
  }
}
