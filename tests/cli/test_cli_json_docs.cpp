// docs/json.md documents every field of every `--format json` schema. These tests run the
// commands and compare the field paths they print with the paths the page lists, both ways:
// a field printed but not documented fails, and so does a documented field no run prints.
// Only names are compared (values belong to the other tests), so the page cannot drift silently.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../unit/probe_test_support.hpp"
#include "cli_harness.hpp"
#include "user_command_harness.hpp"

using memplan::test::CliResult;
using memplan::test::EnvVar;
using memplan::test::run_cli;

namespace {

using Paths = std::set<std::string>;

// Documented paths per schema: the first cell of each table row, "| `fit[].gpu` | ...", below
// a heading "## memplan.<command>/1" and up to the next "## ".
const std::map<std::string, Paths>& documented() {
  static const std::map<std::string, Paths> docs = [] {
    std::map<std::string, Paths> out;
    std::ifstream in(MEMPLAN_SOURCE_DIR "/docs/json.md");
    REQUIRE(in);
    std::string line, schema;
    while (std::getline(in, line)) {
      if (line.rfind("## ", 0) == 0) {
        schema = line.rfind("## memplan.", 0) == 0 ? line.substr(3) : std::string();
        continue;
      }
      if (schema.empty() || line.rfind("| `", 0) != 0) continue;
      const size_t end = line.find('`', 3);
      REQUIRE(end != std::string::npos);
      out[schema].insert(line.substr(3, end - 3));
    }
    return out;
  }();
  return docs;
}

// Every field path of a document: keys joined with '.', "[]" for the elements of an array.
// Below "inputs" nothing: the echoed inputs are described as a whole.
void collect(const nlohmann::json& j, const std::string& prefix, Paths& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
      out.insert(path);
      if (path != "inputs") collect(it.value(), path, out);
    }
  } else if (j.is_array()) {
    for (const nlohmann::json& e : j) collect(e, prefix + "[]", out);
  }
}

// Runs each command (all with --format json), checks its exit code and schema, and returns the
// union of the paths they printed.
Paths printed(const std::string& schema, const std::vector<std::pair<std::vector<std::string>, int>>& runs) {
  Paths out;
  for (const auto& [args, code] : runs) {
    const CliResult r = run_cli(args);
    std::string command;
    for (const std::string& a : args) command += " " + a;
    INFO("memplan" << command << "\nstderr: " << r.err);
    CHECK(r.code == code);
    const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    REQUIRE(!j.is_discarded());
    CHECK(j["schema"] == schema);
    collect(j, "", out);
  }
  return out;
}

void check_documented(const std::string& schema, const Paths& seen) {
  const auto it = documented().find(schema);
  REQUIRE(it != documented().end());
  for (const std::string& p : seen) {
    INFO(schema << ": printed but not in docs/json.md: " << p);
    CHECK(it->second.count(p) == 1);
  }
  for (const std::string& p : it->second) {
    INFO(schema << ": in docs/json.md but printed by none of the runs: " << p);
    CHECK(seen.count(p) == 1);
  }
}

}  // namespace

TEST_CASE("docs/json.md documents every schema the commands print", "[cli][json][docs]") {
  const std::set<std::string> expected = {
      "memplan.estimate/1", "memplan.fit/1",      "memplan.max-batch/1",      "memplan.advise/1",
      "memplan.probe/1",    "memplan.gpus/1",     "memplan.models/1",         "memplan.inspect/1",
      "memplan.dtype/1",    "memplan.cast/1",     "memplan.scale/1",          "memplan.ladder/1",
      "memplan.sweep/1",    "memplan.gguf-fit/1", "memplan.gguf-fit-check/1", "memplan.models-fits/1",
      "memplan.serve/1",    "memplan.diff/1",     "memplan.why-oom/1",        "memplan.serve-sglang/1"};
  std::set<std::string> found;
  for (const auto& [schema, paths] : documented()) {
    found.insert(schema);
    CHECK(paths.count("schema") == 1);
  }
  CHECK(found == expected);
}

TEST_CASE("docs/json.md: memplan.estimate/1 fields", "[cli][json][docs]") {
  // No GPU library: --gpu local gives device_notes on any machine.
  EnvVar library("MEMPLAN_NVML_LIBRARY", std::string("/nonexistent/libnvidia-ml.so.1"));
  const Paths seen = printed(
      "memplan.estimate/1",
      {{{"estimate", "--params", "7e9", "--precision", "fp16", "--gpu", "t4,local", "--format", "json"}, 0},
       {{"estimate", "--model", "llama-2-7b", "--lora", "16", "--precision", "bf16", "--seq", "512", "--gpu",
         "t4", "--format", "json"},
        0},
       {{"estimate", "--model", "llama-2-7b", "--lora", "16", "--quantize", "nf4", "--precision", "bf16",
         "--seq", "512", "--format", "json"},
        0},
       {{"estimate", "--model", "llama-2-7b", "--seq", "8192", "--gpu", "mi300x", "--format", "json"}, 0},
       {{"estimate", "--model",   "llama-2-70b", "--precision", "mixed-bf16", "--optimizer",
         "adamw",    "--gpus",    "8",           "--nodes",     "2",          "--zero",
         "3",        "--offload", "optimizer",   "--seq",       "4096",       "--checkpointing",
         "full",     "--gpu",     "h100-80gb",   "--format",    "json"},
        0}});
  check_documented("memplan.estimate/1", seen);
}

TEST_CASE("docs/json.md: memplan.fit/1 fields", "[cli][json][docs]") {
  EnvVar library("MEMPLAN_NVML_LIBRARY", std::string("/nonexistent/libnvidia-ml.so.1"));
  const Paths seen =
      printed("memplan.fit/1", {{{"fit", "--params", "7e9", "--precision", "fp16", "--mode", "infer", "--gpu",
                                  "t4,a100-80gb", "--format", "json"},
                                 0},
                                {{"fit", "--params", "7e9", "--gpu", "local,t4", "--format", "json"}, 3}});
  check_documented("memplan.fit/1", seen);
}

TEST_CASE("docs/json.md: memplan.max-batch/1 fields", "[cli][json][docs]") {
  const Paths seen =
      printed("memplan.max-batch/1",
              {{{"max-batch", "--model", "gpt2", "--seq", "1024", "--precision", "amp-fp16", "--optimizer",
                 "adamw", "--gpu", "t4,a100-80gb", "--effective-batch", "64", "--format", "json"},
                0},
               {{"max-batch", "--model", "gpt2", "--batch", "8", "--gpu", "t4", "--max-seq", "--precision",
                 "amp-fp16", "--format", "json"},
                0}});
  check_documented("memplan.max-batch/1", seen);
}

TEST_CASE("docs/json.md: memplan.advise/1 fields", "[cli][json][docs]") {
  const Paths seen =
      printed("memplan.advise/1",
              {{{"advise", "--model", "gpt2", "--precision", "fp32", "--optimizer", "adamw", "--batch", "64",
                 "--seq", "1024", "--gpu", "t4", "--limit", "2", "--checklist", "--format", "json"},
                0}});
  check_documented("memplan.advise/1", seen);
}

#ifdef MEMPLAN_FAKE_NVML
TEST_CASE("docs/json.md: memplan.probe/1 fields", "[cli][json][docs][probe]") {
  Paths seen;
  {
    // A machine with an H100 and a T4 (the fake NVML library), then one with no driver.
    EnvVar library("MEMPLAN_NVML_LIBRARY", std::string(MEMPLAN_FAKE_NVML));
    EnvVar scenario("FAKE_NVML_SCENARIO",
                    "driver=550.54.15;" + memplan::test::k_h100 + ";" + memplan::test::k_t4);
    EnvVar visible("CUDA_VISIBLE_DEVICES", std::nullopt);
    seen = printed("memplan.probe/1", {{{"probe", "--format", "json"}, 0}});
  }
  {
    EnvVar library("MEMPLAN_NVML_LIBRARY", std::string("/nonexistent/libnvidia-ml.so.1"));
    const Paths none = printed("memplan.probe/1", {{{"probe", "--format", "json"}, 3}});
    seen.insert(none.begin(), none.end());
  }
  check_documented("memplan.probe/1", seen);
}
#endif

TEST_CASE("docs/json.md: preset, model-file and number-format schemas", "[cli][json][docs]") {
  check_documented("memplan.gpus/1", printed("memplan.gpus/1", {{{"gpus", "--format", "json"}, 0}}));
  check_documented("memplan.models/1", printed("memplan.models/1", {{{"models", "--format", "json"}, 0}}));
  const std::string data = MEMPLAN_TEST_DATA_DIR;
  const std::string corpus = MEMPLAN_SOURCE_DIR "/fuzz/corpus";
  check_documented(
      "memplan.inspect/1",
      printed("memplan.inspect/1",
              {{{"inspect", data + "/hf_model_dir/", "--format", "json"}, 0},
               {{"inspect", corpus + "/gguf/good.gguf", "--format", "json"}, 0},
               {{"inspect", corpus + "/safetensors/good_all_dtypes.safetensors", "--format", "json"}, 0}}));
  check_documented("memplan.dtype/1", printed("memplan.dtype/1", {{{"dtype", "--format", "json"}, 0}}));
  check_documented("memplan.cast/1",
                   printed("memplan.cast/1", {{{"cast", "70000", "1e-8", "0.1", "nan", "--to",
                                                "fp16,bf16,fp8-e4m3,int8", "--format", "json"},
                                               0}}));
  check_documented(
      "memplan.scale/1",
      printed(
          "memplan.scale/1",
          {{{"scale", "--grad-min", "1e-9", "--grad-max", "3.5", "--to", "fp16", "--format", "json"}, 0}}));
}

TEST_CASE("docs/json.md: memplan.ladder/1 and memplan.sweep/1 fields", "[cli][json][docs]") {
  using memplan::test::run_with_trainer;
  auto json_paths = [](const CliResult& r, int code, const std::string& schema) {
    INFO("stderr: " << r.err);
    CHECK(r.code == code);
    const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    REQUIRE(!j.is_discarded());
    CHECK(j["schema"] == schema);
    Paths out;
    collect(j, "", out);
    return out;
  };
  Paths ladder =
      json_paths(run_with_trainer("ladder", {"--start", "64", "--format", "json"}, {"--oom-above", "20"}), 0,
                 "memplan.ladder/1");
  const Paths ladder_failed =
      json_paths(run_with_trainer("ladder", {"--start", "64", "--format", "json"}, {"--crash-at", "64"}), 4,
                 "memplan.ladder/1");
  ladder.insert(ladder_failed.begin(), ladder_failed.end());
  check_documented("memplan.ladder/1", ladder);
  // The second batch fails for a reason other than OOM: a failure object, exit 4.
  check_documented(
      "memplan.sweep/1",
      json_paths(run_with_trainer("sweep", {"--batches", "8,16", "--format", "json"}, {"--crash-at", "16"}),
                 4, "memplan.sweep/1"));
}

TEST_CASE("docs/json.md: memplan.gguf-fit/1, gguf-fit-check/1 and models-fits/1 fields",
          "[cli][json][docs]") {
  const std::string logs = std::string(MEMPLAN_TEST_DATA_DIR) + "/llamacpp_logs/";
  check_documented("memplan.gguf-fit/1",
                   printed("memplan.gguf-fit/1",
                           {{{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu",
                              "rtx-4090", "--format", "json"},
                             0},
                            {{"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu",
                              "rtx-3060", "--n-gpu-layers", "33", "--ctx-size", "64k", "--format", "json"},
                             1},
                            {{"gguf-fit", "--model", "llama-3-70b", "--quantize", "q4_k_m", "--gpu",
                              "rtx-4090", "--ctx-size", "8192", "--fit", "--format", "json"},
                             0}}));
  check_documented(
      "memplan.gguf-fit-check/1",
      printed("memplan.gguf-fit-check/1",
              {{{"gguf-fit", "--config", logs + "phi-4.config.json", "--quantize", "q4_k_m", "--gpu",
                 "rtx-4090", "--check-log", logs + "ollama_13552_phi4_q4_k_m.log", "--format", "json"},
                0}}));
  check_documented(
      "memplan.models-fits/1",
      printed("memplan.models-fits/1",
              {{{"models", "--fits", "rtx-4090", "--quantize", "q4_k_m", "--format", "json"}, 0}}));
}

TEST_CASE("docs/json.md: memplan.serve/1 fields", "[cli][json][docs]") {
  const std::string log = MEMPLAN_SOURCE_DIR "/tests/data/vllm_logs/llama-2-7b_a100-80gb.log";
  check_documented(
      "memplan.serve/1",
      printed("memplan.serve/1",
              {{{"serve", "--model", "llama-2-7b", "--gpu", "a100-80gb", "--vllm-version", "0.6.4",
                 "--check-log", log, "--format", "json"},
                0},
               {{"serve", "--config", MEMPLAN_TEST_DATA_DIR "/hf_configs/gemma-3-1b-it.json", "--gpu",
                 "h100-80gb", "--format", "json"},
                0},
               {{"serve", "--config", MEMPLAN_TEST_DATA_DIR "/hf_configs/Llama-3.2-11B-Vision-Instruct.json",
                 "--gpu", "a100-80gb", "--max-model-len", "4096", "--images", "1", "--format", "json"},
                0}}));
}

TEST_CASE("docs/json.md: memplan.serve-sglang/1 fields", "[cli][json][docs]") {
  const std::string log =
      MEMPLAN_SOURCE_DIR "/tests/data/sglang_logs/meta-llama-3.1-8b-instruct_80gb_docs_2025-01-23.log";
  check_documented(
      "memplan.serve-sglang/1",
      printed("memplan.serve-sglang/1", {{{"serve", "--engine", "sglang", "--model", "llama-3-8b", "--gpu",
                                           "h100-80gb", "--check-log", log, "--format", "json"},
                                          1}}));
}

TEST_CASE("docs/json.md: memplan.diff/1 and memplan.why-oom/1 fields", "[cli][json][docs][many-runs]") {
  const std::string d = MEMPLAN_TEST_DATA_DIR "/diff/", o = MEMPLAN_TEST_DATA_DIR "/oom_messages/";
  const Paths diff = printed(
      "memplan.diff/1",
      {{{"diff", d + "estimate_seq2048.json", d + "estimate_seq4096_batch4.json", "--format", "json"}, 1},
       {{"diff", d + "fit_seq2048.json", d + "llama_lora_seq2048.json", "--format", "json"}, 0}});
  check_documented("memplan.diff/1", diff);
  const Paths oom =
      printed("memplan.why-oom/1",
              {{{"why-oom", o + "pytorch_2024_process_pid.txt", "--format", "json"}, 0},
               {{"why-oom", o + "pytorch_2024_full.txt", "--model", "llama-2-7b", "--precision", "bf16",
                 "--optimizer", "adamw", "--seq", "2048", "--batch", "4", "--format", "json"},
                0},
               {{"why-oom", o + "vllm_v1_kv_needed.txt", "--format", "json"}, 0},
               {{"why-oom", o + "vllm_max_seq_len.txt", "--format", "json"}, 0},
               {{"why-oom", o + "llamacpp_model_buffer.txt", "--format", "json"}, 0}});
  check_documented("memplan.why-oom/1", oom);
}
