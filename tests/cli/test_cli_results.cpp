// Results rendered from plain values: the bugs the old text-carrying results had, each checked
// against numbers worked by hand.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/text_table.hpp"
#include "cli_harness.hpp"

using memplan::test::run_cli;
using nlohmann::json;

namespace {

std::vector<std::string> csv_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("max-batch --max-seq CSV: the sequence under max_seq, the batch under batch", "[cli][results]") {
  auto r = run_cli(
      {"max-batch", "--model", "gpt2", "--batch", "8", "--gpu", "a100-80gb", "--max-seq", "--format", "csv"});
  REQUIRE(r.code == 0);
  const auto lines = csv_lines(r.out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "gpu,batch,max_seq,required_bytes,memory_bytes");
  auto j = json::parse(run_cli({"max-batch", "--model", "gpt2", "--batch", "8", "--gpu", "a100-80gb",
                                "--max-seq", "--format", "json"})
                           .out);
  const uint64_t seq = j["results"][0]["max_seq"].get<uint64_t>();
  // gpt2 at batch 8 would fit far more on 80 GB, but its learned position table has 1,024 rows
  // (issue 27): the search stops at what the model can index.
  CHECK(seq == 1024);
  CHECK(lines[1].rfind("a100-80gb,8," + std::to_string(seq) + ",", 0) == 0);
}

TEST_CASE("max-batch CSV keeps its micro-batch columns", "[cli][results]") {
  auto r = run_cli({"max-batch", "--params", "1.1B", "--precision", "bf16", "--optimizer", "adamw",
                    "--activation-bytes-per-row", "150MiB", "--gpu", "rtx-4090", "--effective-batch", "256",
                    "--format", "csv"});
  REQUIRE(r.code == 0);
  const auto lines = csv_lines(r.out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "gpu,micro_batch,accumulation_steps,effective_batch,required_bytes,memory_bytes");
  CHECK(lines[1].rfind("rtx-4090,86,3,258,", 0) == 0);  // as the golden table: 86 x 3 steps = 258
}

TEST_CASE("the optimizer row names the step counters only when it counts them", "[cli][results]") {
  // No tensor count: AdamW's steps are not counted, and the row does not claim them.
  auto none = run_cli({"estimate", "--params", "7e9", "--optimizer", "adamw"});
  REQUIRE(none.code == 0);
  CHECK(none.out.find("step per tensor") == std::string::npos);
  CHECK(none.out.find("56,000,000,000") != std::string::npos);  // 2 x 4 B x 7e9
  // 291 tensors: 2 x 4 B x 7e9 + 291 x 4 B = 56,000,001,164 B, and the row says so.
  auto counted = run_cli({"estimate", "--params", "7e9", "--tensors", "291", "--optimizer", "adamw"});
  REQUIRE(counted.code == 0);
  CHECK(counted.out.find("56,000,001,164") != std::string::npos);
  CHECK(counted.out.find("AdamW: exp_avg and exp_avg_sq, plus a float32 step per tensor") !=
        std::string::npos);
}

TEST_CASE("the Gradients row names the format of the bytes it counts", "[cli][results]") {
  // Llama 2 7B, P = 6,738,415,616, ZeRO-3 on 8 GPUs: gradient bytes per GPU = bytes per parameter x P / 8.
  const uint64_t p = 6738415616ull;
  auto run = [](const char* grads) {
    auto r = run_cli({"estimate", "--model", "llama-2-7b", "--precision", "mixed-bf16", "--zero", "3",
                      "--gpus", "8", "--grad-format", grads, "--format", "json"});
    REQUIRE(r.code == 0);
    return json::parse(r.out);
  };
  const json half = run("half"), fp32 = run("fp32"), both = run("half+fp32");
  CHECK(half["breakdown"]["gradients"] == 2 * p / 8);
  CHECK(half["formats"]["gradients"] == "bf16");
  CHECK(fp32["breakdown"]["gradients"] == 4 * p / 8);
  CHECK(fp32["formats"]["gradients"] == "fp32");
  CHECK(both["breakdown"]["gradients"] == 6 * p / 8);
  CHECK(both["formats"]["gradients"] == "bf16 + fp32 copy");
  // FSDP keeps the sharded flat gradient in fp32: 4 B per parameter.
  auto fsdp = run_cli({"estimate", "--model", "llama-2-7b", "--precision", "mixed-bf16", "--fsdp",
                       "full-shard", "--gpus", "8", "--format", "json"});
  REQUIRE(fsdp.code == 0);
  const json f = json::parse(fsdp.out);
  CHECK(f["breakdown"]["gradients"] == 4 * p / 8);
  CHECK(f["formats"]["gradients"] == "fp32");
}

TEST_CASE("one GPU is not 'all ranks of 1 GPUs'", "[cli][results]") {
  // ZeRO-Offload on one GPU: gradients and optimizer state leave the GPU.
  auto r = run_cli({"estimate", "--params", "1e9", "--gpus", "1", "--zero", "2", "--offload", "optimizer",
                    "--precision", "mixed-bf16"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("of 1 GPUs") == std::string::npos);
  CHECK(r.out.find("1 per trainable parameter (the only GPU)") != std::string::npos);
  auto eight =
      run_cli({"estimate", "--params", "1e9", "--gpus", "8", "--zero", "2", "--precision", "mixed-bf16"});
  REQUIRE(eight.code == 0);
  CHECK(eight.out.find("(all ranks of 8 GPUs)") != std::string::npos);
}

TEST_CASE("CSV fields are quoted by one rule in every command", "[cli][results]") {
  using memplan::cli::csv_field;
  CHECK(csv_field("a100-80gb") == "a100-80gb");
  CHECK(csv_field("fp32 master, 2 x fp32") == "\"fp32 master, 2 x fp32\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
  CHECK(csv_field("cr\r") == "\"cr\r\"");
  memplan::cli::CsvWriter w;
  w.row({"x", "y,z", ""});
  CHECK(w.str() == "x,\"y,z\",\n");
  // The estimate's CSV goes through the same rule: 12 B x 7e9 of optimizer state, its format bare.
  auto r = run_cli({"estimate", "--params", "7e9", "--precision", "mixed-bf16", "--format", "csv"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("term,optimizer_state,84000000000,,,,fp32 master + 2 x fp32\n") != std::string::npos);
}
