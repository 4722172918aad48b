#include <catch2/catch.hpp>

#include <memplan/fit.hpp>
#include <memplan/presets.hpp>

#include "cli/render_fit.hpp"

using namespace memplan;

TEST_CASE("verdict: fits, tight under 5% spare, no above memory", "[fit]") {
  CHECK(verdict_for(100, 100) == Verdict::tight);
  CHECK(verdict_for(101, 100) == Verdict::no);
  CHECK(verdict_for(95, 100) == Verdict::fits);   // 5 spare = exactly 5%: not under
  CHECK(verdict_for(96, 100) == Verdict::tight);  // 4% spare
  CHECK(verdict_for(0, 100) == Verdict::fits);
}

TEST_CASE("usable memory is NVML total minus the reserved share", "[fit][gpu]") {
  const Presets& p = builtin_presets();
  // H100 SXM: NVML 81559 MiB, CUDA sees ~81090 MiB -> 469 MiB reserved (research/probe_and_gpus.md).
  const GpuSpec& h100 = find_gpu(p, "--gpu", "h100-80gb");
  CHECK(h100.memory_total_bytes == 81559ull << 20);
  CHECK(h100.usable_bytes() == 81090ull << 20);
  // T4: 15360 MiB total on R510+, 15109 MiB on older drivers that excluded the reserve.
  CHECK(find_gpu(p, "--gpu", "colab-t4").usable_bytes() == 15109ull << 20);
  // Apple unified memory: the Metal working set, not the RAM.
  const GpuSpec& m3 = find_gpu(p, "--gpu", "apple-m3-16gb");
  CHECK(m3.usable_bytes() == 11840000000ull);
}

TEST_CASE("a recipe the card cannot run is flagged with what to use instead", "[fit][hardware]") {
  const Presets& p = builtin_presets();
  EstimateRequest r;
  r.model.parameters = 1000;
  r.recipe = parse_recipe("--precision", "amp-bf16");
  r.optimizer = parse_optimizer("--optimizer", "adamw");
  auto w = hardware_warnings(find_gpu(p, "--gpu", "t4"), r);
  REQUIRE(w.size() == 1);
  CHECK(w[0].code == FitWarningCode::not_native);
  CHECK(w[0].format == "amp-bf16");
  CHECK(w[0].family == FormatFamily::bf16);
  CHECK(w[0].compute_capability == 75);
  CHECK(w[0].needs == 80);
  CHECK(w[0].use == Substitute::amp_fp16_scaler);
  CHECK(cli::fit_warning_text(w[0], find_gpu(p, "--gpu", "t4")) ==
        "amp-bf16: bf16 needs compute capability 8.0 (Ampere) or newer; this card is 7.5: PyTorch refuses or "
        "emulates it slowly; use amp-fp16 with a GradScaler (torch.cuda.amp.GradScaler)");
  r.mode = Mode::infer;  // inference needs no loss scaling
  CHECK(hardware_warnings(find_gpu(p, "--gpu", "t4"), r).at(0).use == Substitute::fp16_inference);
  r.mode = Mode::train;
  CHECK(hardware_warnings(find_gpu(p, "--gpu", "a100-80gb"), r).empty());
  r.recipe = parse_recipe("--precision", "fp16");
  r.quantize = StorageFormatId::fp8_e4m3;
  auto w8 = hardware_warnings(find_gpu(p, "--gpu", "a100-80gb"), r);
  REQUIRE(w8.size() == 1);
  CHECK(w8[0].family == FormatFamily::fp8);
  CHECK(w8[0].use == Substitute::amp_bf16_or_int8);  // an A100 (8.0) has bf16
  CHECK(cli::fit_warning_text(w8[0], find_gpu(p, "--gpu", "a100-80gb")) ==
        "fp8-e4m3: fp8 tensor cores need compute capability 8.9 (Ada) or 9.0 (Hopper); this card is 8.0; use "
        "bf16 (amp-bf16), or int8 weights for inference");
  CHECK(hardware_warnings(find_gpu(p, "--gpu", "h100-80gb"), r).empty());
}

TEST_CASE("fit_gpu: spare and verdict agree", "[fit]") {
  EstimateRequest r;
  r.model.parameters = 7000000000;
  r.recipe = parse_recipe("--precision", "fp16");
  r.optimizer = parse_optimizer("--optimizer", "none");
  r.mode = Mode::infer;
  Estimate e = estimate(r);
  for (const GpuSpec& g : builtin_presets().gpus) {
    FitRow row = fit_gpu(g, r, e);
    CHECK(row.required_bytes == e.reserved_bytes() + row.overhead_bytes);  // each GPU's own CUDA context
    CHECK(row.overhead_bytes == cuda_context(g, r.cuda).bytes());
    CHECK(static_cast<int64_t>(row.memory_bytes) - static_cast<int64_t>(row.required_bytes) ==
          row.spare_bytes);
    CHECK((row.verdict == Verdict::no) == (row.spare_bytes < 0));
  }
}

TEST_CASE("fit warnings without a compute capability, and unified memory", "[fit][hardware]") {
  const Presets& p = builtin_presets();
  EstimateRequest r;
  r.model.parameters = 1000;
  r.recipe = parse_recipe("--precision", "amp-bf16");
  r.optimizer = parse_optimizer("--optimizer", "adamw");
  GpuSpec amd;
  amd.id = "old-amd";
  amd.vendor = "amd";
  amd.bf16 = false;
  auto w = hardware_warnings(amd, r);
  REQUIRE(w.size() == 1);
  CHECK(w[0].code == FitWarningCode::no_hardware);
  CHECK(cli::fit_warning_text(w[0], amd) == "amp-bf16: old-amd has no bf16 hardware");
  amd.bf16 = true;
  CHECK(hardware_warnings(amd, r).empty());

  const GpuSpec& m3 = find_gpu(p, "--gpu", "apple-m3-16gb");
  REQUIRE(m3.budget_bytes != 0);
  const FitRow row = fit_gpu(m3, r, estimate(r));
  REQUIRE_FALSE(row.warnings.empty());
  CHECK(row.warnings.back().code == FitWarningCode::unified_budget);
  CHECK(cli::fit_warning_text(row.warnings.back(), m3) == m3.budget_note);
  CHECK(fit_gpu(m3, r, estimate(r), 1000).warnings.size() == row.warnings.size() - 1);  // --against free
}
