// fit, gpus and models through the shared renderers: CSV by the one rule, warnings worded from codes.
#include <catch2/catch.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

#include "../unit/probe_test_support.hpp"
#include "cli/rows.hpp"
#include "cli/text_table.hpp"
#include "cli_harness.hpp"

using namespace memplan;
using memplan::test::line_count;
using memplan::test::run_cli;

TEST_CASE("fit --format csv: 7e9 fp16 weights + the T4's CUDA context against its 15,109 MiB", "[cli][fit]") {
  const auto r = run_cli(
      {"fit", "--params", "7e9", "--precision", "fp16", "--mode", "infer", "--gpu", "t4", "--format", "csv"});
  CHECK(r.code == 0);
  // context = 1,024 B x 1,024 threads x 40 SMs + 441,253,888 B = 483,196,928 B;
  // required = 7e9 x 2 B + 483,196,928 = 14,483,196,928; usable = 15,109 x 2^20 = 15,842,934,784.
  CHECK(r.out ==
        "gpu,memory_bytes,required_bytes,spare_bytes,verdict\n"
        "t4,15842934784,14483196928,1359737856,fits\n");
  // --overhead replaces it: 7e9 x 2 B + 1 GiB = 15,073,741,824; 769,192,960 B spare is under 5% of the
  // memory (20 x 769,192,960 = 15,383,859,200 < 15,842,934,784): tight.
  const auto given = run_cli({"fit", "--params", "7e9", "--precision", "fp16", "--mode", "infer", "--gpu",
                              "t4", "--overhead", "1GiB", "--format", "csv"});
  CHECK(given.out ==
        "gpu,memory_bytes,required_bytes,spare_bytes,verdict\n"
        "t4,15842934784,15073741824,769192960,tight\n");
  // CUDA 11.2 loads every kernel eagerly: + 379,584,512 B (pytorch#86509) = 14,862,781,440.
  const auto eager = run_cli({"fit", "--params", "7e9", "--precision", "fp16", "--mode", "infer", "--gpu",
                              "t4", "--cuda", "11.2", "--format", "csv"});
  CHECK(eager.out ==
        "gpu,memory_bytes,required_bytes,spare_bytes,verdict\n"
        "t4,15842934784,14862781440,980153344,fits\n");
}

TEST_CASE("fit words a recipe the card cannot run, and JSON carries the same words", "[cli][fit][hardware]") {
  const auto r = run_cli({"fit", "--params", "1e6", "--precision", "amp-bf16", "--gpu", "t4,a100-80gb"});
  CHECK(r.code == 0);
  CHECK(r.out.find(
            "  ! amp-bf16: bf16 needs compute capability 8.0 (Ampere) or newer; this card is 7.5: PyTorch "
            "refuses or emulates it slowly; use amp-fp16 with a GradScaler (torch.cuda.amp.GradScaler)\n") !=
        std::string::npos);
  CHECK(line_count(r.out) == 3);  // two GPUs, one warning (the A100 has bf16)
  const auto j = nlohmann::json::parse(run_cli({"fit", "--params", "1e6", "--precision", "amp-bf16", "--mode",
                                                "infer", "--gpu", "t4", "--format", "json"})
                                           .out);
  CHECK(j["fit"][0]["warnings"][0].get<std::string>().find("use fp16 (inference needs no loss scaling)") !=
        std::string::npos);
}

TEST_CASE("gpus and models --format csv", "[cli][gpus][models]") {
  const auto g = run_cli({"gpus", "--format", "csv"});
  CHECK(g.code == 0);
  CHECK(g.out.rfind(
            "id,name,memory_total_bytes,memory_reserved_bytes,usable_bytes,compute_capability,bf16,fp8\n",
            0) == 0);
  // H100 SXM: NVML 81,559 MiB, 469 MiB reserved, 81,090 MiB usable.
  CHECK(g.out.find("\nh100-80gb,NVIDIA H100 80GB SXM5,85520809984,491782144,85029027840,9.0,true,true\n") !=
        std::string::npos);
  const auto m = run_cli({"models", "--format", "csv"});
  CHECK(m.code == 0);
  CHECK(m.out.rfind("id,name,parameters,tensors,layers,hidden,heads,kv_heads\n", 0) == 0);
  // Llama 2 7B: 6,738,415,616 parameters in 291 tensors, 32 layers of 4096 with 32 heads (no GQA).
  CHECK(m.out.find("\nllama-2-7b,Llama 2 7B,6738415616,291,32,4096,32,32\n") != std::string::npos);
}

TEST_CASE("one table renderer: Rows is TextTable flush left, one CSV rule", "[cli][table]") {
  cli::Rows rows;
  rows.header = {"name", "n"};
  rows.right = {false, true};
  rows.cells = {{"a,b", "1"}, {"ccc", "100"}};
  std::ostringstream text, md, csv;
  rows.write(text, cli::Format::table);
  rows.write(md, cli::Format::markdown);
  rows.write(csv, cli::Format::csv);
  CHECK(text.str() == "name    n\na,b     1\nccc   100\n");
  CHECK(md.str() == "| name | n |\n|---|---:|\n| a,b | 1 |\n| ccc | 100 |\n");
  CHECK(csv.str() == "name,n\n\"a,b\",1\nccc,100\n");
  cli::TextTable t({{"name", cli::TextTable::Align::left}, {"n", cli::TextTable::Align::right}});
  t.add_row({"ccc", "100"});
  CHECK(t.render() == "  name  n\n  ----  ---\n  ccc   100\n");  // headers left-aligned, ruled
}

TEST_CASE("estimate: each fit row adds its GPU's CUDA context, and --explain shows the arithmetic",
          "[cli][fit][cuda_context]") {
  const std::vector<std::string> args = {"estimate", "--params", "7e9",   "--precision", "fp16",
                                         "--mode",   "infer",    "--gpu", "t4,h100-80gb"};
  const auto r = run_cli(args);
  REQUIRE(r.code == 0);
  auto explain = args;
  explain.push_back("--explain");
  const auto e = run_cli(explain);
  // T4: 1,024 B x 1,024 threads x 40 SMs = 41,943,040 B; + 441,253,888 B = 483,196,928 B.
  CHECK(
      e.out.find(
          "  t4: 1,024 B stack x 1,024 threads x 40 SMs = 41,943,040 B local memory + 441,253,888 B "
          "driver, handles and lazily loaded kernels (measured on an H200) = 483,196,928 B (460.8 MiB)\n") !=
      std::string::npos);
  // H100: 1,024 B x 2,048 x 132 = 276,824,064 B; + 441,253,888 B = 718,077,952 B.
  CHECK(e.out.find("  h100-80gb: 1,024 B stack x 2,048 threads x 132 SMs = 276,824,064 B local memory") !=
        std::string::npos);
  CHECK(e.out.find("CUDA context per GPU (CUDA 13.0, lazy module loading") != std::string::npos);
  auto json_args = args;
  json_args.insert(json_args.end(), {"--format", "json"});
  const auto j = nlohmann::json::parse(run_cli(json_args).out);
  CHECK(j["overhead_source"] == "cuda_context");
  CHECK(j["breakdown"]["overhead"] == 718077952ull);  // the larger of the two
  CHECK(j["required_bytes"] == 14718077952ull);
  CHECK(j["fit"][0]["overhead_bytes"] == 483196928ull);
  CHECK(j["fit"][0]["required_bytes"] == 14483196928ull);
  CHECK(j["fit"][0]["cuda_context"]["local_memory_bytes"] == 41943040ull);
  CHECK(j["fit"][1]["overhead_bytes"] == 718077952ull);
  CHECK(j["inputs"]["overhead"].is_null());
  CHECK(j["inputs"]["cuda"] == "13.0");
  CHECK(j["inputs"]["cuda_module_loading"] == "lazy");
  json_args.insert(json_args.end(), {"--overhead", "1GiB"});
  const auto given = nlohmann::json::parse(run_cli(json_args).out);
  CHECK(given["overhead_source"] == "given");
  CHECK(given["fit"][0]["cuda_context"].is_null());
  CHECK(given["fit"][0]["overhead_bytes"] == 1073741824ull);
  CHECK(given["fit"][1]["overhead_bytes"] == 1073741824ull);
  CHECK(given["inputs"]["overhead"] == "1073741824");
}

TEST_CASE("max-batch searches each GPU with its own CUDA context", "[cli][fit][cuda_context]") {
  // gpt2 amp-fp16 AdamW, seq 1024: the T4's context is 718,077,952 - 483,196,928 = 234,881,024 B smaller
  // than an H100's; with --overhead equal to the H100's, the T4 row's required bytes grow by that much.
  const std::vector<std::string> base = {"max-batch",   "--model",  "gpt2",        "--seq", "1024",
                                         "--precision", "amp-fp16", "--optimizer", "adamw", "--gpu",
                                         "t4",          "--format", "json"};
  const auto own = nlohmann::json::parse(run_cli(base).out);
  auto fixed_args = base;
  fixed_args.insert(fixed_args.end(), {"--overhead", "718077952"});
  const auto fixed = nlohmann::json::parse(run_cli(fixed_args).out);
  CHECK(own["results"][0]["overhead_bytes"] == 483196928ull);
  CHECK(fixed["results"][0]["overhead_bytes"] == 718077952ull);
  CHECK(own["results"][0]["micro_batch"].get<uint64_t>() >=
        fixed["results"][0]["micro_batch"].get<uint64_t>());
}

#ifdef MEMPLAN_FAKE_NVML
TEST_CASE("a local device (--gpu cuda:N) takes the SMs of the preset with its compute capability and total",
          "[cli][fit][cuda_context][probe]") {
  memplan::test::EnvVar library("MEMPLAN_NVML_LIBRARY", std::string(MEMPLAN_FAKE_NVML));
  memplan::test::EnvVar scenario("FAKE_NVML_SCENARIO",
                                 "driver=550.54.15;" + memplan::test::k_h100 + ";" + memplan::test::k_t4);
  memplan::test::EnvVar visible("CUDA_VISIBLE_DEVICES", std::nullopt);
  // cuda:1 is the T4 (7.5, 16,106,127,360 B like preset t4): 40 SMs, context 483,196,928 B;
  // usable 16,106,127,360 - 263,192,576 = 15,842,934,784 B; required 7e9 x 2 B + 483,196,928.
  const auto r = run_cli({"fit", "--params", "7e9", "--precision", "fp16", "--mode", "infer", "--gpu",
                          "cuda:1", "--format", "csv"});
  CHECK(r.out ==
        "gpu,memory_bytes,required_bytes,spare_bytes,verdict\n"
        "cuda:1,15842934784,14483196928,1359737856,fits\n");
}
#endif
