// memplan serve --from FILE / --from-command: pasted vLLM, SGLang and llama-server command lines
// (tests/data/from/serve, SOURCES.md) plan the same as the flags written by hand from reading them;
// the shell words are split as a shell would; bad or hostile input is refused in one line.
#include <catch2/catch.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

#include <memplan/error.hpp>

#include "../unit/model_file_builders.hpp"
#include "cli/serve_from.hpp"
#include "cli/serve_from_words.hpp"
#include "cli_harness.hpp"

using memplan::test::run_cli;

namespace {

std::string serve_sample(const std::string& name) {
  return std::string(MEMPLAN_TEST_DATA_DIR) + "/from/serve/" + name;
}

std::vector<std::string> serve_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

nlohmann::json serve_json(std::vector<std::string> args) {
  args.push_back("--format");
  args.push_back("json");
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.code <= 1);
  nlohmann::json doc = nlohmann::json::parse(r.out);
  doc["exit_code"] = r.code;
  return doc;
}

// `memplan serve --from FILE BOTH` against `memplan COMMAND BOTH FLAGS`.
void check_serve_from(const std::vector<std::string>& from_args, const std::string& command,
                      const std::string& both, const std::string& flags) {
  std::vector<std::string> from = from_args, hand{command};
  for (const std::string& w : serve_words(both)) {
    from.push_back(w);
    hand.push_back(w);
  }
  for (const std::string& w : serve_words(flags)) hand.push_back(w);
  nlohmann::json a = serve_json(from);
  REQUIRE(a.contains("from"));
  a.erase("from");
  CHECK(a == serve_json(hand));
}

struct ServeCase {
  const char* file;
  const char* command;  // what memplan runs it as
  const char* both;     // on both sides: the GPU, a preset (tests run offline), the weights' format
  const char* flags;    // the engine flags, written by hand as memplan's
};

// clang-format off
const ServeCase k_serve_samples[] = {
  {"vllm-opt-13b-tp4.sh", "serve", "--gpu a100-80gb --model llama-3-8b", "--tp 4"},
  {"vllm-gpt2-tp4-pp2.sh", "serve", "--gpu a100-80gb", "--model gpt2 --tp 4 --pp 2"},
  {"vllm-container-tp8-pp2.sh", "serve", "--gpu h100-80gb --model llama-3-70b", "--tp 8 --pp 2"},
  {"vllm-docker.sh", "serve", "--gpu a100-80gb --model llama-3-8b", ""},
  {"vllm-disaggregated-prefill.sh", "serve", "--gpu a100-80gb --model llama-3-8b",
   "--max-model-len 100 --gpu-memory-utilization 0.8"},
  {"sglang-tp2.sh", "serve", "--gpu a100-80gb --model llama-3-8b", "--engine sglang --tp 2"},
  {"sglang-mem-fraction.sh", "serve", "--gpu a100-80gb --model llama-3-8b", "--engine sglang --mem-fraction-static 0.7"},
  {"sglang-chunked-prefill.sh", "serve", "--gpu a100-80gb --model llama-3-8b",
   "--engine sglang --chunked-prefill-size 4096"},
  {"sglang-router-dp2-tp2.sh", "serve", "--gpu a100-80gb --model llama-3-8b", "--engine sglang --tp 2"},
  {"sglang-multi-node.sh", "serve", "--gpu a100-80gb --model llama-3-70b", "--engine sglang --tp 4"},
  {"llama-quick-start.sh", "gguf-fit", "--gpu rtx-4090 --model llama-3-8b --quantize q4_0", "--ctx-size 2048"},
  {"llama-docker.sh", "gguf-fit", "--gpu rtx-4090 --model llama-3-8b --quantize q4_0", "--ctx-size 512"},
  {"llama-docker-cuda.sh", "gguf-fit", "--gpu rtx-4090 --model llama-3-8b --quantize q4_0",
   "--ctx-size 512 --n-gpu-layers 99"},
  {"llama-mcp.sh", "gguf-fit", "--gpu rtx-4090 --model llama-3-8b --quantize q4_k_m", ""},
  {"llama-multimodal-hf.sh", "gguf-fit", "--gpu rtx-4090 --model gemma-3-1b --quantize q4_k_m", ""},
};
// clang-format on

const memplan::cli::FromField* serve_used(const memplan::cli::ServeFrom& s, const std::string& field) {
  for (const memplan::cli::FromField& u : s.report.used)
    if (u.field == field) return &u;
  return nullptr;
}

std::string serve_error(const std::string& text) {
  try {
    memplan::cli::read_serve_command(text, "cmd.sh");
  } catch (const memplan::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("from serve: each serving command sample plans as its flags by hand", "[cli][from]") {
  for (const ServeCase& s : k_serve_samples) {
    INFO(s.file);
    check_serve_from({"serve", "--from", serve_sample(s.file)}, s.command, s.both, s.flags);
  }
}

TEST_CASE("from serve: --from-command takes the command line itself, env and all", "[cli][from]") {
  // CUDA_VISIBLE_DEVICES=0,1: llama.cpp splits the layers over both, so one --gpu type is two GPUs.
  check_serve_from(
      {"serve", "--from-command",
       "CUDA_VISIBLE_DEVICES=0,1 llama-server -m model.gguf -c 8192 -ngl 99 -np 4 "
       "--cache-type-k q8_0 -fa on --host 0.0.0.0",
       "--gpu", "rtx-4090"},
      "gguf-fit", "--model llama-3-8b --quantize q4_k_m",
      "--gpu rtx-4090,rtx-4090 --ctx-size 8192 --n-gpu-layers 99 --parallel 4 --cache-type-k q8_0 "
      "--flash-attn");
  // --no-op-offload: the host layers' products stay on the CPU (GPU 0's compute buffer shrinks).
  check_serve_from(
      {"serve", "--from-command", "llama-server -m model.gguf -ngl 20 --no-op-offload", "--gpu", "rtx-3060"},
      "gguf-fit", "--model llama-3-8b --quantize q4_k_m", "--gpu rtx-3060 --n-gpu-layers 20 --no-op-offload");
  // Without the --gpu expansion the two sides differ: the test can fail.
  {
    nlohmann::json a =
        serve_json({"serve", "--from-command", "CUDA_VISIBLE_DEVICES=0,1 llama-server -m m.gguf", "--model",
                    "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090"});
    a.erase("from");
    CHECK(a !=
          serve_json({"gguf-fit", "--model", "llama-3-8b", "--quantize", "q4_k_m", "--gpu", "rtx-4090"}));
  }
  check_serve_from(
      {"serve", "--from-command",
       "python -m vllm.entrypoints.openai.api_server --model meta-llama/Meta-Llama-3-8B "
       "--max_model_len=4096 --kv-cache-dtype fp8 --dtype bfloat16 --max-num-seqs 64 "
       "--enable-prefix-caching"},
      "serve", "--gpu l40s",
      "--model llama-3-8b --max-model-len 4096 --kv-format fp8 --precision bf16 --max-num-seqs 64");
  check_serve_from(
      {"serve", "--from-command",
       "python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3-8B --tp-size 2 "
       "--context-length 16384 --kv-cache-dtype fp8_e5m2 --mem-fraction-static 0.8"},
      "serve", "--gpu a100-80gb",
      "--model llama-3-8b --engine sglang --tp 2 --context-length 16384 --kv-cache-dtype fp8_e5m2 "
      "--mem-fraction-static 0.8");
}

TEST_CASE("from serve: the report names every flag, what is not modelled and what is not read",
          "[cli][from]") {
  const nlohmann::json j = serve_json({"serve", "--from", serve_sample("vllm-disaggregated-prefill.sh"),
                                       "--gpu", "a100-80gb", "--model", "llama-3-8b"});
  const nlohmann::json& f = j["from"];
  CHECK(f["framework"] == "vllm");
  bool len = false, kv = false;
  for (const auto& u : f["used"])
    len |= u["field"] == "--max-model-len" && u["option"] == "--max-model-len 100";
  for (const auto& n : f["not_modelled"]) kv |= n["field"] == "--kv-transfer-config";
  CHECK(len);
  CHECK(kv);
  REQUIRE(f["overridden"].size() == 1);
  CHECK(f["overridden"][0] == "--model llama-3-8b replaces --model meta-llama/Meta-Llama-3.1-8B-Instruct");
  CHECK(f["runs_as"][0] == "serve");

  const auto t = run_cli({"serve", "--from", serve_sample("llama-mcp.sh"), "--gpu", "rtx-4090", "--model",
                          "llama-3-8b", "--quantize", "q4_k_m"});
  REQUIRE(t.code <= 1);
  CHECK(t.out.rfind("inputs from " + serve_sample("llama-mcp.sh") + " (llama-server):\n", 0) == 0);
  CHECK(t.out.find("  not read: --mcp-servers-config\n") != std::string::npos);
  CHECK(t.out.find("  runs as: memplan gguf-fit --model llama-3-8b") != std::string::npos);
  CHECK(t.out.find("  overridden: --model llama-3-8b replaces --gguf model.gguf\n") != std::string::npos);

  const auto m = run_cli({"serve", "--from", serve_sample("sglang-multi-node.sh"), "--gpu", "a100-80gb",
                          "--model", "llama-3-70b"});
  CHECK(m.out.find("  note: the file holds 2 engine commands: the first is read\n") != std::string::npos);
  CHECK(m.out.find("  --tp = 4 -> --tp 4\n") != std::string::npos);
}

TEST_CASE("from serve: command lines are split into words as a shell does", "[cli][from]") {
  using memplan::cli::split_commands;
  const auto c = split_commands(
      "# a comment\nexport TP=2\nMODEL=\"org/my model\"  # quoted\n"
      "CUDA_VISIBLE_DEVICES=0,1 vllm serve \"$MODEL\" \\\n  --tp ${TP} --x ${UNSET:-7} 'a b'\\ c \"q\\\"\" "
      "2>&1 | tee log\n",
      "f");
  REQUIRE(c.size() == 2);
  std::vector<std::string> words;
  for (const auto& w : c[0].words) words.push_back(w.text);
  CHECK(words ==
        std::vector<std::string>{"vllm", "serve", "org/my model", "--tp", "2", "--x", "7", "a b c", "q\""});
  CHECK(c[0].env.at("CUDA_VISIBLE_DEVICES") == "0,1");
  CHECK(c[0].words[3].line == 5);
  CHECK(c[0].words[3].column == 3);
  CHECK(c[1].words[0].text == "tee");
  // A variable the file does not set stays as written; only memplan's own flags refuse it.
  const auto u = split_commands("vllm serve m --api-key $HF_TOKEN", "f");
  CHECK(u[0].words[4].text == "$HF_TOKEN");
  CHECK(u[0].words[4].unset == "HF_TOKEN");
  const memplan::cli::ServeFrom s =
      memplan::cli::read_serve_command("vllm serve m --api-key $HF_TOKEN -tp 2", "f");
  CHECK(serve_used(s, "--api-key") == nullptr);
  REQUIRE(serve_used(s, "-tp") != nullptr);
  CHECK(serve_used(s, "-tp")->option == "--tp 2");
}

TEST_CASE("from serve: bad or hostile command lines are refused in one line naming the word", "[cli][from]") {
  CHECK(serve_error("vllm serve m --tensor-parallel-size x")
            .rfind("cmd.sh:1:37: \"x\": --tensor-parallel-size: \"x\" is not ", 0) == 0);
  CHECK(serve_error("vllm serve m -tp") == "cmd.sh:1:14: \"-tp\": needs a value (expected -tp VALUE)");
  CHECK(serve_error("vllm serve m --tp 2").empty());  // not vLLM's spelling: listed as not read
  CHECK(serve_error("vllm serve 'm") == "cmd.sh:1:12: a ' quote is not closed");
  CHECK(serve_error("vllm serve m\n  --max-model-len \"4096") == "cmd.sh:2:19: a \" quote is not closed");
  CHECK(serve_error("vllm serve $(cat model.txt)")
            .rfind("cmd.sh:1:12: command substitution $(...) is not run", 0) == 0);
  CHECK(serve_error("vllm serve `cat m`").rfind("cmd.sh:1:12: command substitution `...` is not run", 0) ==
        0);
  CHECK(serve_error("vllm serve $MODEL") ==
        "cmd.sh:1:12: \"$MODEL\": $MODEL is not set in the file (expected the model written out)");
  CHECK(serve_error("vllm serve m --max-model-len $LEN").rfind("cmd.sh:1:30: \"$LEN\": $LEN is not set", 0) ==
        0);
  CHECK(serve_error("vllm serve m --enforce-eager=yes --swa-full").empty());
  CHECK(serve_error("llama-server -m m.gguf --swa-full=1") ==
        "cmd.sh:1:24: \"--swa-full=1\": takes no value (expected --swa-full alone)");
  CHECK(serve_error("llama-server -m m.gguf --dtype x").empty());  // not llama.cpp's: listed as not read
  CHECK(serve_error("vllm serve m --dtype int3") ==
        "cmd.sh:1:22: \"int3\": --dtype: \"int3\" is not auto, bfloat16, float16 or float32");
  CHECK(
      serve_error("python train.py --lr 1").rfind("cmd.sh: is not a serving command line memplan reads", 0) ==
      0);
  CHECK(serve_error(std::string("vllm serve m\0", 13)).rfind("cmd.sh:1:13: holds a NUL byte", 0) == 0);
  CHECK(serve_error("vllm serve m ${A").rfind("cmd.sh:1:14: a ${...} that is not", 0) == 0);
  CHECK(serve_error("f() { vllm serve m; }").rfind("cmd.sh:1:2: a subshell or function", 0) == 0);
  std::string many = "vllm serve m";
  for (int i = 0; i < 5000; ++i) many += " x";
  CHECK(serve_error(many).find("more than 4096 words") != std::string::npos);
  CHECK(serve_error("vllm serve " + std::string(5000, 'm')).find("a word longer than 4096 bytes") !=
        std::string::npos);
  // $A expanding to itself many times is bounded by the word and byte limits, not memory.
  std::string bomb = "A=" + std::string(4000, 'a') + "\nvllm serve m";
  for (int i = 0; i < 400; ++i) bomb += " $A";
  CHECK(serve_error(bomb).find("expands to more than 1 MiB") != std::string::npos);

  // Through the CLI: one line, exit 2, nothing on stdout.
  memplan::test::TempDir dir("from_serve_bad");
  const std::string bad = dir.write("bad.sh", "vllm serve m \\\n  --pipeline-parallel-size 0\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"serve", "--from", bad, "--gpu", "a100-80gb"},
        std::vector<std::string>{"serve", "--from", dir.file("none.sh"), "--gpu", "a100-80gb"},
        std::vector<std::string>{"serve", "--from", bad, "--from-command", "vllm serve m", "--gpu",
                                 "a100-80gb"},
        std::vector<std::string>{"serve", "--from-command", "vllm serve m --gpu-memory-utilization 2",
                                 "--gpu", "a100-80gb", "--model", "llama-3-8b"},
        std::vector<std::string>{"serve", "--from-command", "vllm serve m", "--model", "llama-3-8b"}}) {
    const auto r = run_cli(args);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(memplan::test::line_count(r.err) == 1);
  }
  const auto r = run_cli({"serve", "--from", bad, "--gpu", "a100-80gb"});
  CHECK(r.err == "memplan: error: " + bad +
                     ":2:28: \"0\": --pipeline-parallel-size: \"0\" must be at least 1 (read as --pp)\n");
}
