// fit, gpus and models through the shared renderers: CSV by the one rule, warnings worded from codes.
#include <catch2/catch.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/rows.hpp"
#include "cli/text_table.hpp"
#include "cli_harness.hpp"

using namespace memplan;
using memplan::test::line_count;
using memplan::test::run_cli;

TEST_CASE("fit --format csv: 7e9 fp16 weights + 512 MiB overhead against a T4's 15,109 MiB", "[cli][fit]") {
  const auto r = run_cli(
      {"fit", "--params", "7e9", "--precision", "fp16", "--mode", "infer", "--gpu", "t4", "--format", "csv"});
  CHECK(r.code == 0);
  // required = 7e9 x 2 B + 536,870,912 = 14,536,870,912; usable = 15,109 x 2^20 = 15,842,934,784.
  CHECK(r.out ==
        "gpu,memory_bytes,required_bytes,spare_bytes,verdict\n"
        "t4,15842934784,14536870912,1306063872,fits\n");
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
