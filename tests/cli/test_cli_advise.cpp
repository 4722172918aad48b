// memplan advise: the example from issue 7 (Llama-2-7B fp32 AdamW, batch 16 x 2048 on an RTX 4090),
// its JSON schema, the fitting case, the checklist, and bad input.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using memplan::test::line_count;
using memplan::test::run_cli;

namespace {

std::vector<std::string> example(std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"advise",      "--model", "llama-2-7b", "--precision", "fp32",
                                "--optimizer", "adamw",   "--batch",    "16",          "--seq",
                                "2048",        "--gpu",   "rtx-4090"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

}  // namespace

TEST_CASE("advise: the example run gets tiers, verdicts and combinations", "[cli][advise][many-runs]") {
  const auto r = run_cli(example());
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  // 421.2 GiB needed (the step's peak, at the start of backward) against the 4090's 24.0 GiB: the
  // 442.4 GiB of every term at once, less the gradients (25.1 GiB, not yet alive) and the fp32
  // logits (16 x 2048 x 32000 x 4 B = 3.9 GiB, freed before backward), plus cross-entropy's two
  // gradients of that size (7.8 GiB). Required is what the caching allocator reserves for that step
  // (its segments and the holes the activations leave) + the RTX 4090's CUDA context (1,024 B x 1,536
  // threads x 128 SMs + 441,253,888 B = 642,580,480 B, 0.6 GiB): 440.3 GiB.
  CHECK(r.out.find("required 440.3 GiB, rtx-4090 offers 24.0 GiB: short by 416.3 GiB") != std::string::npos);
  // Tier 1 first: micro-batch 1 with 16 accumulation steps keeps the effective batch of 16.
  const auto table = r.out.find("Changes, cheapest first");
  REQUIRE(table != std::string::npos);
  // The text table (issue 16: it fits 100 columns): tier, required, verdict, then the change,
  // its cost on the lines below.
  const auto first_row = r.out.find("micro-batch 1 x 16 accumulation steps (effective batch 16)\n", table);
  REQUIRE(first_row != std::string::npos);
  const auto line_start = r.out.rfind('\n', first_row) + 1;
  CHECK(r.out.compare(line_start, 8, "     1  ") == 0);
  const auto next = r.out.find('\n', first_row) + 1;
  CHECK(r.out.substr(next, r.out.find('\n', next) - next).find("cost: x16 accumulation steps") !=
        std::string::npos);
  CHECK(r.out.find("autocast amp-bf16") > first_row);
  CHECK(r.out.find("a bigger GPU") == std::string::npos);  // nothing holds 442 GiB
  CHECK(r.out.find("no single preset GPU fits as is") != std::string::npos);
  CHECK(r.out.find("Combinations that first make it fit") != std::string::npos);
  CHECK(r.out.find("divide the loss by the 16 steps") != std::string::npos);
}

TEST_CASE("advise: JSON follows memplan.advise/1", "[cli][advise][many-runs]") {
  const auto r = run_cli(example({"--format", "json"}));
  REQUIRE(r.code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["schema"] == "memplan.advise/1");
  CHECK(doc["inputs"]["batch"] == 16);
  CHECK(doc["verdict"] == "no");
  CHECK(doc["memory_bytes"] == 25757220864ull);  // the 4090 preset's NVML total
  REQUIRE(doc["suggestions"].is_array());
  REQUIRE(doc["suggestions"].size() >= 3);
  for (const auto& s : doc["suggestions"]) {
    for (const char* key : {"tier", "change", "required_bytes", "verdict", "cost"}) CHECK(s.contains(key));
    CHECK(s["required_bytes"].is_number_unsigned());
    CHECK(s["verdict"] == "no");  // no single change fits
  }
  CHECK(doc["suggestions"][0]["knobs"][0] == "micro-batch");
  CHECK(doc["suggestions"][0]["batch"] == 1);
  REQUIRE_FALSE(doc["combinations"].empty());
  const auto& best = doc["combinations"][0];
  CHECK(best["verdict"] != "no");
  CHECK(best["required_bytes"].get<uint64_t>() <= 25757220864ull);
  CHECK(doc["checklist"].is_null());
}

TEST_CASE("advise: a run that fits shows its headroom, changes only with --all", "[cli][advise]") {
  const std::vector<std::string> args = {"advise", "--model", "gpt2", "--precision", "fp32", "--batch",
                                         "8",      "--seq",   "1024", "--gpu",       "t4"};
  const auto r = run_cli(args);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("fits: required") != std::string::npos);
  CHECK(r.out.find("spare (") != std::string::npos);
  CHECK(r.out.find("Changes, cheapest first") == std::string::npos);
  auto all = args;
  all.push_back("--all");
  CHECK(run_cli(all).out.find("Changes, cheapest first") != std::string::npos);
}

TEST_CASE("advise: --checklist prints tier 0, --limit trims, csv and markdown", "[cli][advise][many-runs]") {
  const auto c = run_cli(example({"--checklist", "--limit", "2"}));
  REQUIRE(c.code == 0);
  CHECK(c.out.find("loss.item()") != std::string::npos);
  CHECK(c.out.find("torch.no_grad()") != std::string::npos);
  const auto j =
      nlohmann::json::parse(run_cli(example({"--format", "json", "--limit", "2", "--checklist"})).out);
  CHECK(j["suggestions"].size() == 2);
  CHECK(j["combinations"].size() <= 2);
  CHECK(j["checklist"].size() == 4);
  const auto csv = run_cli(example({"--format", "csv"}));
  REQUIRE(csv.code == 0);
  CHECK(csv.out.rfind("kind,tier,change,required_bytes,verdict,cost,gpu,gpus\nsingle,1,", 0) == 0);
  const auto md = run_cli(example({"--format", "markdown"}));
  CHECK(md.out.find("| tier |") != std::string::npos);
}

TEST_CASE("advise: bad input is one stderr line, exit 2, empty stdout", "[cli][advise]") {
  const std::vector<std::pair<std::vector<std::string>, const char*>> bad = {
      {{"advise", "--model", "llama-2-7b", "--seq", "2048", "--gpu", "t4,rtx-4090"},
       "--gpu: advise needs exactly one GPU, got 2 (t4,rtx-4090)"},
      {{"advise", "--model", "llama-2-7b", "--seq", "2048", "--gpu", "rtx-4091"}, "--gpu"},
      {{"advise", "--model", "llama-2-7b", "--seq", "2048"}, "--gpu: required"},
      {example({"--limit", "0"}), "--limit: \"0\" must be at least 1"},
      {example({"--limit", "x"}), "--limit"},
  };
  for (const auto& [args, fragment] : bad) {
    const auto r = run_cli(args);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(line_count(r.err) == 1);
    CHECK(r.err.find(fragment) != std::string::npos);
  }
}
