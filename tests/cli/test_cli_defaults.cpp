// Issue 27's defaults and verdicts: a newcomer's plain question gets what a user of that checkpoint
// really runs, and a "no" says what would change it. Expected numbers are written out by hand.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "matrix_harness.hpp"

using memplan::test::json_of;
using memplan::test::required_on;
using memplan::test::run_cli;
using memplan::test::term;
using memplan::test::verdict_on;
using nlohmann::json;

TEST_CASE("issue 27: estimate --model llama-3-8b --mode infer counts the checkpoint's bf16 weights",
          "[cli][defaults]") {
  // Meta-Llama-3-8B's config.json: "torch_dtype": "bfloat16"; 8,030,261,248 parameters x 2 B = 15.0 GiB
  // (it counted fp32: 29.9 GiB).
  const json doc = json_of({"estimate", "--model", "llama-3-8b", "--mode", "infer"});
  CHECK(term(doc, "parameters") == 8030261248ull * 2);
  CHECK(doc.at("inputs").at("precision") == "bf16");
  // Llama 2 ships fp16 weights, GPT-2 fp32.
  CHECK(term(json_of({"estimate", "--model", "llama-2-7b", "--mode", "infer"}), "parameters") ==
        6738415616ull * 2);
  CHECK(term(json_of({"estimate", "--model", "gpt2", "--mode", "infer"}), "parameters") == 124439808ull * 4);
  // The table names where the format came from.
  const auto table = run_cli({"estimate", "--model", "llama-3-8b", "--mode", "infer", "--explain"});
  CHECK(table.out.find("torch_dtype \"bfloat16\"") != std::string::npos);
}

TEST_CASE("issue 27: models --fits counts each checkpoint's dtype and takes --precision", "[cli][defaults]") {
  // Llama-3-8B in bf16 at 4,096 tokens: 16,060,522,496 B of weights + 32 x 4,096 x 2 x 8 x 128 x 2 B =
  // 536,870,912 B of KV cache: it fits a 24 GB card (in fp32 it needed 32 GB and did not).
  const json fits = json_of({"models", "--fits", "rtx-4090"});
  bool seen = false;
  for (const auto& row : fits.at("models"))
    if (row.at("id") == "llama-3-8b") {
      seen = true;
      CHECK(row.at("fits") == true);
      CHECK(row.at("required_bytes").get<uint64_t>() > 16060522496ull + 536870912ull);
      CHECK(row.at("required_bytes").get<uint64_t>() < 18ull << 30);
    }
  CHECK(seen);
  const json fp32 = json_of({"models", "--fits", "rtx-4090", "--precision", "fp32"});
  for (const auto& row : fp32.at("models"))
    if (row.at("id") == "llama-3-8b") CHECK(row.at("fits") == false);
  CHECK(fp32.at("precision") == "fp32");
  const auto bad = run_cli({"models", "--fits", "rtx-4090", "--precision", "fp33"});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--precision") != std::string::npos);
}

TEST_CASE("issue 27: QLoRA without --precision computes in the checkpoint's dtype", "[cli][defaults]") {
  // bitsandbytes' Linear4bit computes in its input's dtype when that is bf16 (set_compute_type); the
  // input is the checkpoint's bf16 (transformers v5 loads dtype "auto").
  const json doc =
      json_of({"estimate", "--model", "llama-3-8b", "--lora", "16", "--quantize", "nf4", "--seq", "2048"});
  CHECK(doc.at("inputs").at("precision") == "bf16");
  CHECK(doc.at("formats").at("activations") == "bf16");
}

TEST_CASE("issue 27: a training run of a transformer without --seq says no activations were counted",
          "[cli][defaults]") {
  const auto r = run_cli({"estimate", "--model", "gpt2", "--optimizer", "adamw", "--gpu", "t4"});
  CHECK(r.code == 0);
  CHECK(r.out.find("note: activations are not counted: no --seq given") != std::string::npos);
  const auto with_seq = run_cli({"estimate", "--model", "gpt2", "--seq", "512", "--gpu", "t4"});
  CHECK(with_seq.out.find("no --seq given") == std::string::npos);
  const auto fit = run_cli({"fit", "--model", "gpt2", "--gpu", "t4"});
  CHECK(fit.out.find("activations are not counted") != std::string::npos);
}

TEST_CASE("issue 27: advise offers CPU offload on a run already sharded with ZeRO-3",
          "[cli][defaults][advise]") {
  // Llama-2-70B over 8 A100s with ZeRO-3: offloading the optimizer keeps the 8 GPUs and their stage.
  const std::vector<std::string> run = {"--model",         "llama-2-70b", "--precision", "mixed-bf16",
                                        "--optimizer",     "adamw",       "--gpus",      "8",
                                        "--zero",          "3",           "--seq",       "4096",
                                        "--checkpointing", "full",        "--gpu",       "a100-80gb"};
  std::vector<std::string> args = {"advise"};
  args.insert(args.end(), run.begin(), run.end());
  const json advice = json_of(args);
  bool offload = false;
  for (const auto& s : advice.at("suggestions"))
    if (s.at("knobs") == json::array({"offload"})) {
      offload = true;
      CHECK(s.at("gpus") == 8);
      CHECK(s.at("verdict") != "no");
      std::vector<std::string> fit = {"fit"};
      fit.insert(fit.end(), run.begin(), run.end());
      fit.insert(fit.end(),
                 {"--offload", s.at("change").get<std::string>().find("parameters") != std::string::npos
                                   ? "parameters"
                                   : "optimizer"});
      CHECK(required_on(json_of(fit), "a100-80gb") == s.at("required_bytes"));
    }
  CHECK(offload);
}

TEST_CASE("issue 27: advise ranks checkpointing above cutting the sequence", "[cli][defaults][advise]") {
  const json advice = json_of({"advise", "--model", "llama-2-7b", "--precision", "amp-bf16", "--optimizer",
                               "adamw-8bit", "--seq", "4096", "--gpu", "a100-80gb"});
  int checkpointing = -1, sequence = -1, i = 0;
  for (const auto& s : advice.at("suggestions")) {
    if (s.at("knobs") == json::array({"checkpointing"}) && checkpointing < 0) checkpointing = i;
    if (s.at("knobs") == json::array({"sequence"})) sequence = i;
    ++i;
  }
  REQUIRE(checkpointing >= 0);
  REQUIRE(sequence >= 0);
  CHECK(checkpointing < sequence);
}
