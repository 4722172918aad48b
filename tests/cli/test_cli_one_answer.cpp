// Issue 27, "one answer, whatever the door": a multi-GPU plan counts what one GPU counts (the
// step's peak, the caching allocator's reserve), plus what the layout adds, with the sharded terms
// divided as the layout says. Numbers worked by hand from the model's published parameter count.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using memplan::test::run_cli;
using nlohmann::json;

namespace {

json run_json(std::vector<std::string> args) {
  args.push_back("--format");
  args.push_back("json");
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return json::parse(r.out);
}

// Phi-3 mini (3,821,079,552 parameters, 195 tensors), torch autocast bf16, AdamW, one H100 80GB: the
// case where the one-GPU verdict said "no" and --gpus 2 said "fits" with the same load per GPU.
std::vector<std::string> phi3(std::vector<std::string> extra) {
  std::vector<std::string> a = {"estimate", "--model", "phi-3-mini", "--precision", "amp-bf16", "--optimizer",
                                "adamw",    "--seq",   "2048",       "--gpu",       "h100-80gb"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

const uint64_t k_phi3 = 3821079552ull;

}  // namespace

TEST_CASE("issue 27: --gpus 2 (DDP) counts the step peak, the allocator's reserve and DDP's gradient buckets",
          "[cli][parallel][issue27]") {
  const json one = run_json(phi3({}));
  const json ddp = run_json(phi3({"--gpus", "2"}));
  // DDP keeps the whole replica: the same weights, gradients and state as one GPU ...
  for (const char* k : {"parameters", "gradients", "optimizer_state", "activations"})
    CHECK(ddp["breakdown"][k] == one["breakdown"][k]);
  // ... plus its Reducer's buckets, a second copy of the fp32 gradients: P x 4 B.
  const uint64_t buckets = k_phi3 * 4;  // 15,284,318,208 B
  CHECK(ddp["breakdown"]["buffers"] == buckets);
  // The verdict comes from the step timeline and the replay, as on one GPU.
  REQUIRE(ddp["timeline"].is_array());
  REQUIRE(ddp["reserved"].is_object());
  // The buckets are alive in every phase: the peak is one GPU's peak plus them.
  CHECK(ddp["peak_bytes"].get<uint64_t>() == one["peak_bytes"].get<uint64_t>() + buckets);
  CHECK(ddp["peak_phase"] == one["peak_phase"]);
  for (const json& p : ddp["timeline"]) CHECK(p["buffers"] == buckets);
  CHECK(ddp["required_bytes"].get<uint64_t>() >= one["required_bytes"].get<uint64_t>() + buckets);
  // One GPU says no; the same load per GPU over two cannot say "fits".
  CHECK(one["fit"][0]["verdict"] == "no");
  CHECK(ddp["fit"][0]["verdict"] == "no");
}

TEST_CASE("issue 27: --zero 2 replays the sharded gradients and optimizer state",
          "[cli][parallel][issue27]") {
  const json one = run_json(phi3({}));
  const json z2 = run_json(phi3({"--gpus", "2", "--zero", "2"}));
  REQUIRE(z2["timeline"].is_array());
  REQUIRE(z2["reserved"].is_object());
  // ZeRO-2 over 2 ranks: fp32 weights whole (4P), fp32 gradients over 2 (4P/2), AdamW's two fp32 moments
  // over 2 (8P/2) plus the step counters (4 B x 195 tensors) over 2; no buffers at stage 2.
  const uint64_t w = 4 * k_phi3, g = 4 * k_phi3 / 2, s = 8 * k_phi3 / 2 + 4 * 195 / 2;
  CHECK(z2["breakdown"]["parameters"] == w);
  CHECK(z2["breakdown"]["gradients"] == g);
  CHECK(z2["breakdown"]["optimizer_state"] == s);
  const json& opt = z2["timeline"][4];
  REQUIRE(opt["phase"] == "optimizer");
  CHECK(opt["weights"] == w);
  CHECK(opt["gradients"] == g);
  CHECK(opt["optimizer_state"] == s);
  // DeepSpeed steps with its FusedAdam: no temporaries.
  CHECK(opt["transient"] == 0);
  // The replay sees those sizes: what it reserves is at least the sharded peak, and less than one GPU's.
  CHECK(z2["reserved_bytes"].get<uint64_t>() >= z2["peak_bytes"].get<uint64_t>());
  CHECK(z2["reserved_bytes"].get<uint64_t>() < one["reserved_bytes"].get<uint64_t>());
  CHECK(z2["peak_bytes"].get<uint64_t>() < one["peak_bytes"].get<uint64_t>());
}

TEST_CASE("issue 27: FSDP's torch AdamW makes its foreach temporary over the rank's shard only",
          "[cli][parallel][issue27]") {
  const json f = run_json(phi3({"--gpus", "2", "--fsdp", "full-shard"}));
  REQUIRE(f["timeline"].is_array());
  const json& opt = f["timeline"][4];
  REQUIRE(opt["phase"] == "optimizer");
  // FULL_SHARD over 2: fp32 flat parameter P/2 x 4 B; sqrt(exp_avg_sq) of that shard: P/2 x 4 B.
  CHECK(opt["weights"] == k_phi3 / 2 * 4);
  CHECK(opt["transient"] == k_phi3 / 2 * 4);
}

TEST_CASE("issue 27: --gpus auto picks a layout whose own verdict fits", "[cli][parallel][issue27]") {
  const json j = run_json(phi3({"--gpus", "auto"}));
  CHECK(j["fit"][0]["verdict"] != "no");
  CHECK(j["required_bytes"].get<uint64_t>() <= j["fit"][0]["memory_bytes"].get<uint64_t>());
}

TEST_CASE("issue 27: FSDP FULL_SHARD with AdamW holds 16 B per parameter over the world size",
          "[cli][parallel][issue27]") {
  // 1e9 parameters over 4 ranks. FSDP's flat parameter stays fp32 under mixed precision
  // (torch/distributed/fsdp/_flat_param.py): 4 (weights) + 4 (gradients) + 8 (AdamW) = 16 B per parameter,
  // / 4 ranks = 4,000,000,000 B; with fp32 everywhere the same.
  for (const char* precision : {"mixed-bf16", "fp32"}) {
    INFO(precision);
    const json j = run_json({"estimate", "--params", "1e9", "--precision", precision, "--optimizer", "adamw",
                             "--gpus", "4", "--fsdp", "full-shard", "--gpu", "h100-80gb"});
    CHECK(j["breakdown"]["parameters"] == 1000000000ull / 4 * 4);
    CHECK(j["breakdown"]["gradients"] == 1000000000ull / 4 * 4);
    CHECK(j["breakdown"]["optimizer_state"] == 1000000000ull / 4 * 8);
    CHECK(j["total_bytes"] == 16ull * 1000000000ull / 4);
  }
}

TEST_CASE("issue 27: max-batch --effective-batch counts the data-parallel ranks",
          "[cli][parallel][issue27]") {
  // GPT-2 at seq 1,024 on 8 H100s (DDP): 512 = micro-batch 64 x 1 step x 8 ranks, where the ranks were
  // ignored before (86 x 6 = 516). Each rank needs 512 / 8 = 64 samples; 64 fits, so no accumulation.
  const std::vector<std::string> a = {
      "max-batch", "--model", "gpt2", "--precision", "amp-bf16",  "--optimizer",       "adamw", "--seq",
      "1024",      "--gpus",  "8",    "--gpu",       "h100-80gb", "--effective-batch", "512"};
  std::vector<std::string> js = a;
  const json j = run_json(js);
  const json& row = j["results"][0];
  REQUIRE(row["max_micro_batch"].get<uint64_t>() >= 64);
  CHECK(row["data_parallel_ranks"] == 8);
  CHECK(row["accumulation_steps"] == 1);
  CHECK(row["micro_batch"] == 64);
  CHECK(row["effective_batch"] == 64 * 1 * 8);
  const auto t = run_cli(a);
  REQUIRE(t.code == 0);
  CHECK(t.out.find("effective batch = micro-batch 64 x 1 step x 8 data-parallel ranks = 512") !=
        std::string::npos);
  // --tp 2 over the same 8 GPUs leaves 4 data-parallel ranks: 512 / 4 = 128 per rank.
  std::vector<std::string> tp = a;
  tp.insert(tp.end(), {"--tp", "2"});
  const json k = run_json(tp);
  CHECK(k["results"][0]["data_parallel_ranks"] == 4);
  const uint64_t micro = k["results"][0]["micro_batch"], steps = k["results"][0]["accumulation_steps"];
  CHECK(micro * steps * 4 >= 512);
  CHECK((micro - 1) * steps * 4 < 512);  // the smallest micro-batch for that many steps
}

TEST_CASE("issue 27: --gpus 8 --mode infer splits the model over tensor parallelism 8",
          "[cli][parallel][issue27]") {
  const std::vector<std::string> base = {"estimate", "--model",     "llama-3-70b", "--mode",
                                         "infer",    "--precision", "bf16",        "--seq",
                                         "4096",     "--gpu",       "h100-80gb"};
  std::vector<std::string> gpus = base, tp = base;
  gpus.insert(gpus.end(), {"--gpus", "8"});
  tp.insert(tp.end(), {"--tp", "8"});
  const json g = run_json(gpus);
  const json t = run_json(tp);
  CHECK(g["breakdown"] == t["breakdown"]);
  CHECK(g["required_bytes"] == t["required_bytes"]);
  // Not the whole model on one GPU: 70,553,706,496 x 2 B would be 141 GB.
  CHECK(g["breakdown"]["parameters"].get<uint64_t>() < 70553706496ull * 2 / 4);
  // Said in the output: the layout line of the table, and the note among the assumptions.
  const auto text = run_cli(gpus);
  CHECK(text.out.find("Layout: 8 GPUs, tensor parallel 8 x pipeline 1 (vLLM --tensor-parallel-size 8") !=
        std::string::npos);
  bool noted = false;
  for (const json& a : g["assumptions"])
    noted = noted || a.get<std::string>().find(
                         "--gpus 8 for inference: tensor parallelism over 8 GPUs (vLLM "
                         "--tensor-parallel-size 8)") != std::string::npos;
  CHECK(noted);
  // --tp that does not cover the GPUs is refused, in one line.
  std::vector<std::string> bad = gpus;
  bad.insert(bad.end(), {"--tp", "4"});
  const auto r = run_cli(bad);
  CHECK(r.code == 2);
  CHECK(memplan::test::line_count(r.err) == 1);
  CHECK(r.err.find("--gpus: 8 GPUs, but inference splits one model over tp x pp = 4 x 1 = 4 GPUs") !=
        std::string::npos);
}
