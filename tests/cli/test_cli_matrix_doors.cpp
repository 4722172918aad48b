// The consistency matrix, doors: the same question asked through estimate, fit, a plan file, --config,
// inspect, models --fits, max-batch and advise gives the same numbers and the same verdict.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "matrix_harness.hpp"

using memplan::test::Args;
using memplan::test::hf_config;
using memplan::test::json_of;
using memplan::test::preset_facts;
using memplan::test::required_on;
using memplan::test::run_cli;
using memplan::test::term;
using memplan::test::verdict_on;
using memplan::test::with;
using nlohmann::json;

namespace {

// Runs of every kind the commands share: inference (weights + KV), training (the step's replayed
// reserve), LoRA, QLoRA, several GPUs.
const std::vector<Args>& runs() {
  static const std::vector<Args> r = {
      {"--model", "llama-3-8b", "--mode", "infer", "--seq", "8192", "--batch", "4"},
      {"--model", "mistral-7b", "--mode", "infer", "--seq", "32768", "--quantize", "q4_k_m"},
      {"--model", "gemma-2-9b", "--mode", "infer", "--seq", "8192", "--kv-format", "fp8"},
      {"--model", "tinyllama-1.1b", "--precision", "amp-bf16", "--optimizer", "adamw", "--seq", "1024",
       "--batch", "4"},
      {"--model", "qwen3-8b", "--lora", "16", "--seq", "2048", "--batch", "2"},
      {"--model", "llama-3-8b", "--lora", "16", "--quantize", "nf4", "--seq", "4096"},
      {"--model", "gpt2", "--precision", "fp32", "--optimizer", "adamw", "--seq", "1024", "--batch", "8"},
      {"--model", "llama-2-13b", "--precision", "mixed-bf16", "--optimizer", "adamw", "--seq", "2048",
       "--gpus", "8", "--zero", "3"},
  };
  return r;
}

const Args k_gpus = {"--gpu", "rtx-4090,a100-80gb,h100-80gb"};

std::string write_plan(const json& inputs, const std::string& name) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("memplan_matrix_plan_" + name + ".json")).string();
  std::ofstream(path) << inputs.dump(2);
  return path;
}

}  // namespace

TEST_CASE("matrix: estimate, fit and a plan file give the same terms, requirement and verdict per GPU",
          "[cli][matrix]") {
  int n = 0;
  for (const Args& run : runs()) {
    INFO(run[1]);
    const json est = json_of(with(with({"estimate"}, run), k_gpus));
    const json fit = json_of(with(with({"fit"}, run), k_gpus));
    const json plan = json_of({"estimate", "--plan", write_plan(est.at("inputs"), std::to_string(n++))});
    for (const char* gpu : {"rtx-4090", "a100-80gb", "h100-80gb"}) {
      INFO(gpu);
      CHECK(required_on(fit, gpu) == required_on(est, gpu));
      CHECK(verdict_on(fit, gpu) == verdict_on(est, gpu));
      CHECK(required_on(plan, gpu) == required_on(est, gpu));
    }
    CHECK(plan.at("breakdown") == est.at("breakdown"));
    CHECK(fit.at("required_bytes") == est.at("required_bytes"));
  }
}

TEST_CASE("matrix: a preset and its config.json give the same weights, KV cache and default dtype",
          "[cli][matrix]") {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"llama-2-7b", "Llama-2-7b-hf.json"},
      {"llama-2-70b", "Llama-2-70b-hf.json"},
      {"llama-3-8b", "Meta-Llama-3-8B.json"},
      {"mistral-7b", "Mistral-7B-v0.1.json"},
      {"mixtral-8x7b", "Mixtral-8x7B-v0.1.json"},
      {"phi-3-mini", "Phi-3-mini-4k-instruct.json"},
      {"gemma-2b", "gemma-2b.json"},
      {"gemma-7b", "gemma-7b.json"},
      {"gemma-3-1b", "gemma-3-1b-it.json"},
      {"phi-2", "phi-2.json"},
      {"olmo-2-7b", "OLMo-2-1124-7B.json"},
      {"aya-23-8b", "aya-23-8B.json"},
      {"phi-3.5-moe", "Phi-3.5-MoE-instruct.json"},
      {"gpt2", "gpt2.json"},
  };
  for (const auto& [preset, config] : pairs) {
    INFO(preset << " vs " << config);
    const Args q = {"--mode", "infer", "--seq", "1024", "--batch", "2", "--gpu", "h200"};
    // Without --precision: each takes the checkpoint's torch_dtype (issue 27: the preset counted fp32).
    const json a = json_of(with({"estimate", "--model", preset}, q));
    const json b = json_of(with({"estimate", "--config", hf_config(config)}, q));
    CHECK(term(a, "parameters") == term(b, "parameters"));
    CHECK(term(a, "kv_cache") == term(b, "kv_cache"));
    CHECK(a.at("inputs").at("precision") == b.at("inputs").at("precision"));
    CHECK(required_on(a, "h200") == required_on(b, "h200"));
  }
}

TEST_CASE("matrix: inspect counts what estimate counts", "[cli][matrix]") {
  for (const char* config :
       {"Qwen3-4B.json", "Qwen3-30B-A3B.json", "DeepSeek-V2.5.json", "gemma-3-4b-it.json",
        "Llama-3.1-8B-Instruct.json", "gpt-oss-20b.json", "starcoder2-3b.json"}) {
    INFO(config);
    const json inspected = json_of({"inspect", hf_config(config)});
    const json est = json_of({"estimate", "--config", hf_config(config), "--mode", "infer", "--gpu", "h200"});
    CHECK(inspected.at("parameters") == est.at("model").at("parameters"));
  }
}

TEST_CASE("matrix: models --fits gives each preset the requirement estimate gives it", "[cli][matrix]") {
  for (const std::string gpu : {"rtx-4090", "12GB"}) {
    const json fits = json_of({"models", "--fits", gpu});
    for (const auto& row : fits.at("models")) {
      const std::string id = row.at("id");
      if (row.contains("skipped")) continue;
      INFO(gpu << " " << id);
      const json est = json_of({"estimate", "--model", id, "--mode", "infer", "--seq", "4096", "--gpu", gpu});
      CHECK(row.at("required_bytes") == est.at("fit").at(0).at("required_bytes"));
      CHECK(row.at("fits").get<bool>() == (est.at("fit").at(0).at("verdict") != "no"));
    }
  }
}

TEST_CASE("matrix: max-batch's micro-batch fits and one more does not", "[cli][matrix]") {
  const std::vector<std::pair<Args, std::string>> cases = {
      {{"--model", "tinyllama-1.1b", "--precision", "amp-bf16", "--optimizer", "adamw", "--seq", "1024"},
       "rtx-4090"},
      {{"--model", "llama-3-8b", "--lora", "16", "--quantize", "nf4", "--seq", "2048", "--checkpointing",
        "full"},
       "rtx-4090"},
      {{"--model", "llama-3-8b", "--mode", "infer", "--seq", "8192"}, "a100-80gb"},
      {{"--model", "gpt2", "--precision", "amp-fp16", "--optimizer", "adamw", "--seq", "1024"}, "t4"},
  };
  for (const auto& [run, gpu] : cases) {
    INFO(run[1] << " on " << gpu);
    const json mb = json_of(with(with({"max-batch"}, run), {"--gpu", gpu}));
    const json& res = mb.at("results").at(0);
    const uint64_t b = res.at("micro_batch");
    REQUIRE(b >= 1);
    const json at_b = json_of(with(with({"fit"}, run), {"--gpu", gpu, "--batch", std::to_string(b)}));
    CHECK(verdict_on(at_b, gpu) != "no");
    CHECK(required_on(at_b, gpu) == res.at("required_bytes"));
    if (!res.value("capped", false)) {
      const json more = json_of(
          memplan::test::set_flags(with({"fit"}, run), {"--gpu", gpu, "--batch", std::to_string(b + 1)}));
      CHECK(verdict_on(more, gpu) == "no");
    }
  }
}

TEST_CASE("matrix: max-batch's plan for an effective batch fits as printed", "[cli][matrix]") {
  const Args run = {"--model",     "tinyllama-1.1b", "--precision", "amp-bf16",
                    "--optimizer", "adamw",          "--seq",       "512"};
  for (const char* effective : {"8", "12", "64"}) {
    INFO("effective batch " << effective);
    const json mb =
        json_of(with(with({"max-batch"}, run), {"--gpu", "rtx-4090", "--effective-batch", effective}));
    const json& res = mb.at("results").at(0);
    const uint64_t micro = res.at("micro_batch");
    const uint64_t steps = res.at("accumulation_steps");
    REQUIRE(micro >= 1);
    CHECK(micro * steps >= std::stoull(effective));
    const json at = json_of(with(with({"fit"}, run), {"--gpu", "rtx-4090", "--batch", std::to_string(micro),
                                                      "--grad-accum", std::to_string(steps)}));
    CHECK(verdict_on(at, "rtx-4090") != "no");
    CHECK(required_on(at, "rtx-4090") == res.at("required_bytes"));
  }
}

namespace {

// advise's change as the flags a user would type; empty when the knob has no flag form here.
Args flags_of(const json& s) {
  const std::vector<std::string> knobs = s.at("knobs");
  const std::string change = s.at("change");
  Args a;
  for (const std::string& k : knobs) {
    if (k == "micro-batch") {
      a = with(a, {"--batch", std::to_string(s.at("batch").get<uint64_t>())});
      // "micro-batch M x S accumulation steps": the S gradients' micro-batches keep them allocated
      const auto x = change.find(" x ");
      if (x != std::string::npos)
        a = with(a, {"--grad-accum", std::to_string(std::stoull(change.substr(x + 3)))});
    } else if (k == "sequence") {
      a = with(a, {"--seq", std::to_string(s.at("seq").get<uint64_t>())});
    } else if (k == "checkpointing") {
      a = with(a, {"--checkpointing", change.find("selective") != std::string::npos ? "selective" : "full"});
    } else if (k == "optimizer-8bit") {
      a = with(a, {"--optimizer", "adamw-8bit"});
    } else if (k == "adafactor") {
      a = with(a, {"--optimizer", "adafactor"});
    } else if (k == "autocast") {
      a = with(a, {"--precision", change.find("bf16") != std::string::npos ? "amp-bf16" : "amp-fp16"});
    } else if (k == "offload") {
      const bool params = change.find("parameters") != std::string::npos;
      a = with(a, {"--zero", params ? "3" : "2", "--offload", params ? "parameters" : "optimizer"});
    } else if (k == "gpu") {
      a = with(a, {"--gpu", s.at("gpu").get<std::string>()});
    } else {
      return {};
    }
  }
  return a;
}

}  // namespace

TEST_CASE("matrix: advise's change applied gives the requirement and verdict it printed",
          "[cli][matrix][many-runs]") {
  const std::vector<std::pair<Args, std::string>> cases = {
      {{"--model", "llama-2-7b", "--precision", "fp32", "--optimizer", "adamw", "--batch", "16", "--seq",
        "2048"},
       "rtx-4090"},
      {{"--model", "tinyllama-1.1b", "--precision", "fp32", "--optimizer", "adamw", "--batch", "8", "--seq",
        "2048"},
       "t4"},
      {{"--model", "llama-3-8b", "--lora", "16", "--quantize", "nf4", "--seq", "4096"}, "rtx-4090"},
      // ZeRO-0 bf16 full fine-tune at batch 8: "2 x 4" once cost 77.6 GiB at one step; 4 steps keep
      // the gradients through the later forwards.
      {{"--model", "llama-3-8b", "--precision", "bf16", "--optimizer", "adamw", "--batch", "8", "--seq",
        "2048"},
       "a100-80gb"},
      {{"--model", "llama-2-7b", "--lora", "16", "--batch", "16", "--seq", "2048"}, "rtx-4090"},
      {{"--model", "gpt2", "--precision", "amp-fp16", "--optimizer", "adamw", "--batch", "64", "--seq",
        "1024"},
       "t4"},
  };
  int checked = 0;
  for (const auto& [run, gpu] : cases) {
    const json advice = json_of(with(with({"advise"}, run), {"--gpu", gpu}));
    for (const char* list : {"suggestions", "combinations"}) {
      if (!advice.contains(list)) continue;
      for (const json& s : advice.at(list)) {
        const Args change = flags_of(s);
        if (change.empty() || s.at("gpus") != 1) continue;
        const std::string on = s.at("gpu");
        const Args args = memplan::test::set_flags(with({"fit"}, run), with({"--gpu", on}, change));
        INFO(run[1] << " on " << gpu << ": " << s.at("change").get<std::string>());
        const json applied = json_of(args);
        CHECK(required_on(applied, on) == s.at("required_bytes"));
        CHECK(verdict_on(applied, on) == s.at("verdict"));
        ++checked;
      }
    }
  }
  CHECK(checked >= 8);
}

TEST_CASE("matrix: a no names the cheapest change, and that change fits", "[cli][matrix]") {
  // issue 27: QLoRA Llama-3-8B at 4k is "no, 40.1 GiB" on a 24 GB card and fits with full checkpointing.
  const Args run = {"--model", "llama-3-8b", "--lora", "16",    "--quantize",
                    "nf4",     "--seq",      "4096",   "--gpu", "rtx-4090"};
  const json est = json_of(with({"estimate"}, run));
  REQUIRE(verdict_on(est, "rtx-4090") == "no");
  const json& fix = est.at("fit").at(0).at("cheapest_change");
  REQUIRE(fix.is_object());
  CHECK(fix.at("knobs") == json::array({"checkpointing"}));
  const json applied = json_of(memplan::test::set_flags(with({"fit"}, run), {"--checkpointing", "full"}));
  CHECK(verdict_on(applied, "rtx-4090") == fix.at("verdict"));
  CHECK(required_on(applied, "rtx-4090") == fix.at("required_bytes"));
  // The table says it on one line.
  const auto table = run_cli(with({"estimate"}, run));
  CHECK(table.out.find("no on rtx-4090: cheapest change that fits: checkpointing full") != std::string::npos);
}
