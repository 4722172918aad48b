// Issue 27, "one answer, whatever the door": input that was taken silently in a second meaning is
// read one way (8k tokens = 8,192), refused with the option, the value and what was expected (exit
// 2, one line), or said in the output's notes; and a GPU is named by the runtime it runs.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using memplan::test::line_count;
using memplan::test::run_cli;

namespace {

// Runs `args`, checks the error contract, returns the stderr line.
std::string error_line(const std::vector<std::string>& args) {
  const auto r = run_cli(args);
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(line_count(r.err) == 1);
  CHECK(r.err.rfind("memplan: error: ", 0) == 0);
  return r.err;
}

nlohmann::json doors_json(const std::vector<std::string>& args, int code = 0) {
  const auto r = run_cli(args);
  INFO(r.out << r.err);
  REQUIRE(r.code == code);
  return nlohmann::json::parse(r.out);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("issue 27: --seq 8k is 8,192 tokens in every token-count option", "[cli][errors][issue27]") {
  // llama-2-7b inference, KV cache = 2 (K, V) x 32 layers x 32 KV heads x 128 head dim x 8,192
  // tokens x 2 B (fp16) = 4,294,967,296 B: 8k read as 8,000 would give 4,194,304,000.
  const auto k = doors_json({"estimate", "--model", "llama-2-7b", "--mode", "infer", "--precision", "fp16",
                             "--seq", "8k", "--format", "json"});
  CHECK(k["inputs"]["seq"] == 8192);
  CHECK(k["breakdown"]["kv_cache"] == 2ull * 32 * 32 * 128 * 8192 * 2);
  CHECK(k["breakdown"]["kv_cache"] == 4294967296ull);
  // Every token-count option reads k the same way.
  const auto serve = doors_json({"serve", "--model", "llama-2-7b", "--gpu", "a100-80gb", "--max-model-len",
                                 "4k", "--max-num-batched-tokens", "2k", "--format", "json"});
  CHECK(serve["settings"]["max_model_len"] == 4096);
  CHECK(serve["settings"]["max_num_batched_tokens"] == 2048);
  const auto gguf = doors_json(
      {"gguf-fit", "--model", "llama-2-7b", "--gpu", "rtx-4090", "--ctx-size", "4k", "--format", "json"});
  CHECK(gguf["n_ctx"] == 4096);
  const auto chunk = doors_json({"estimate", "--model", "llama-2-7b", "--mode", "infer", "--seq", "4096",
                                 "--prefill-chunk", "1k", "--format", "json"});
  const auto chunk_digits = doors_json({"estimate", "--model", "llama-2-7b", "--mode", "infer", "--seq",
                                        "4096", "--prefill-chunk", "1024", "--format", "json"});
  CHECK(chunk["required_bytes"] == chunk_digits["required_bytes"]);
  // A parameter count stays decimal; a batch size takes no suffix.
  CHECK(doors_json({"estimate", "--params", "8k", "--format", "json"})["model"]["parameters"] == 8000);
  CHECK(
      error_line({"estimate", "--model", "llama-2-7b", "--seq", "1024", "--batch", "1k"}) ==
      "memplan: error: --batch: \"1k\": a batch size is written in digits (is 1k 1,000 or 1,024?) (expected "
      "e.g. 8, 512, 1024)\n");
  CHECK(
      error_line({"estimate", "--model", "llama-2-7b", "--seq", "8B"}) ==
      "memplan: error: --seq: \"8B\": a token count takes k (1,024) or M (1,048,576) (expected e.g. 4096, 8k "
      "= 8,192, 128k = 131,072)\n");
}

TEST_CASE("issue 27: --params 7 is refused with a hint", "[cli][errors][issue27]") {
  CHECK(error_line({"estimate", "--params", "7"}) ==
        "memplan: error: --params: \"7\" is 7 parameters; did you mean 7B? (expected e.g. 7B, 7e9, 125M; a "
        "model "
        "this small: 7e0)\n");
  CHECK(has(error_line({"estimate", "--params", "999"}),
            "--params: \"999\" is 999 parameters; did you mean 999B?"));
  // Said with an exponent or a suffix, a small count is meant: 7e0 = 7, 0.5k = 500.
  CHECK(doors_json({"estimate", "--params", "7e0", "--format", "json"})["model"]["parameters"] == 7);
  CHECK(doors_json({"estimate", "--params", "0.5k", "--format", "json"})["model"]["parameters"] == 500);
  CHECK(doors_json({"estimate", "--params", "1000", "--format", "json"})["model"]["parameters"] == 1000);
}

TEST_CASE("issue 27: --gpu \"24 GB\" is 24GB", "[cli][errors][issue27]") {
  // "24GB" is the 24gb alias of rtx-4090: 24,564 MiB = 25,757,220,864 B (data/gpus.json, no driver
  // share). Before, "24 GB" was a custom GPU of 24,000,000,000 B.
  const auto joined = doors_json({"estimate", "--params", "7B", "--gpu", "24GB", "--format", "json"}, 0);
  const auto spaced = doors_json({"estimate", "--params", "7B", "--gpu", "24 GB", "--format", "json"}, 0);
  CHECK(spaced["fit"][0]["gpu"] == "rtx-4090");
  CHECK(spaced["fit"][0]["memory_bytes"] == 24564ull * 1024 * 1024);
  CHECK(spaced["fit"] == joined["fit"]);
  // Spaces around a list's names go too; a size with a space is the size.
  const auto list = doors_json({"estimate", "--params", "7B", "--gpu", "t4, 12 GiB", "--format", "json"}, 0);
  CHECK(list["fit"][0]["gpu"] == "t4");
  CHECK(list["fit"][1]["gpu"] == "12GiB");
  CHECK(list["fit"][1]["memory_bytes"] == 12ull << 30);
}

TEST_CASE("issue 27: --seq past the model's trained context is said", "[cli][errors][issue27]") {
  // llama-2-7b: max_position_embeddings 4,096 (rotary): 8,192 runs, untrained, so a note.
  const std::string sentence =
      "--seq 8,192 is longer than the 4,096 positions the model was trained for (max_position_embeddings): "
      "it "
      "runs, but its output past them is not what it was trained to give";
  const auto table = run_cli({"estimate", "--model", "llama-2-7b", "--seq", "8192", "--gpu", "h100-80gb"});
  REQUIRE(table.code == 0);
  CHECK(has(table.out, "  note: " + sentence + "\n"));
  const auto j = doors_json(
      {"estimate", "--model", "llama-2-7b", "--seq", "8192", "--gpu", "h100-80gb", "--format", "json"});
  CHECK(j["warnings"] == nlohmann::json::array({sentence}));
  const auto within = doors_json(
      {"estimate", "--model", "llama-2-7b", "--seq", "4096", "--gpu", "h100-80gb", "--format", "json"});
  CHECK_FALSE(within.contains("warnings"));
  // GPT-2's positions are a learned table of 1,024 rows: 4,096 cannot run, so it is refused.
  CHECK(error_line({"estimate", "--model", "gpt2", "--seq", "4096"}) ==
        "memplan: error: --seq: 4,096 tokens are more than the model's 1,024 learned positions (its position "
        "table has 1,024 rows; transformers raises IndexError past them): at most 1,024\n");
  CHECK(run_cli({"estimate", "--model", "gpt2", "--seq", "1024"}).code == 0);
  // The longest sequence max-batch finds for it stops at the table's 1,024 rows (an H100 holds far more).
  const auto seq =
      doors_json({"max-batch", "--model", "gpt2", "--gpu", "h100-80gb", "--max-seq", "--format", "json"});
  CHECK(seq["results"][0]["max_seq"] == 1024);
  // vLLM refuses a max_model_len past the model's unless told to.
  const auto serve = doors_json(
      {"serve", "--model", "llama-2-7b", "--gpu", "a100-80gb", "--max-model-len", "32k", "--format", "json"});
  bool noted = false;
  for (const auto& n : serve["notes"])
    noted =
        noted || n.get<std::string>().rfind(
                     "--max-model-len 32,768 is longer than the 4,096 positions the model was trained for "
                     "(max_position_embeddings): vLLM refuses it at start-up unless "
                     "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1",
                     0) == 0;
  CHECK(noted);
}

TEST_CASE("issue 27: Apple and AMD GPUs are named by their runtime, not CUDA", "[cli][errors][issue27]") {
  // memplan's context figure is the H200's CUDA context: 1,024 B stack x 2,048 threads x 132 SMs
  // = 276,824,064 B + 441,253,888 B measured = 718,077,952 B; on Metal and ROCm it stands in, named so.
  const std::vector<std::string> args = {"estimate",
                                         "--model",
                                         "llama-2-7b",
                                         "--mode",
                                         "infer",
                                         "--seq",
                                         "2048",
                                         "--precision",
                                         "bf16",
                                         "--gpu",
                                         "apple-m3-max-128gb,mi300x"};
  auto explain = args;
  explain.push_back("--explain");
  const auto t = run_cli(explain);
  INFO(t.out);
  REQUIRE(t.code == 0);
  CHECK(has(t.out, "\nRuntime context per GPU (none of them runs CUDA):\n"));
  CHECK(has(t.out,
            "  apple-m3-max-128gb: Metal: memplan has no measured figure for its context; the CUDA context "
            "measured on an H200 (718,077,952 B, 684.8 MiB) stands in\n"));
  CHECK(has(t.out, "  mi300x: ROCm/HIP: memplan has no measured figure for its context;"));
  CHECK_FALSE(has(t.out, "CUDA context per GPU"));
  CHECK_FALSE(has(t.out, "apple-m3-max-128gb: 1,024 B stack"));
  CHECK_FALSE(has(t.out, "CUDA context (largest of the GPUs)"));
  CHECK_FALSE(has(t.out, "overhead = the CUDA context predicted"));
  auto as_json = args;
  as_json.insert(as_json.end(), {"--format", "json"});
  const auto j = doors_json(as_json);
  CHECK(j["overhead_source"] == "assumed");
  CHECK(j["fit"][0]["runtime"] == "metal");
  CHECK(j["fit"][1]["runtime"] == "rocm");
  CHECK(j["fit"][0]["cuda_context"].is_null());
  CHECK(j["fit"][0]["overhead_bytes"] == 1024ull * 2048 * 132 + 441253888ull);
  CHECK(has(j["fit"][1]["overhead_note"].get<std::string>(), "ROCm/HIP: memplan has no measured figure"));
  // An NVIDIA GPU keeps its CUDA context.
  const auto h = doors_json({"estimate", "--params", "7B", "--gpu", "h100-80gb", "--format", "json"});
  CHECK(h["fit"][0]["runtime"] == "cuda");
  CHECK(h["fit"][0]["overhead_note"].is_null());
  CHECK(h["fit"][0]["cuda_context"]["bytes"] == h["fit"][0]["overhead_bytes"]);
  // llama.cpp names its devices by backend: ROCm0 in a HIP build, MTL0 on Metal.
  const auto amd = run_cli({"gguf-fit", "--model", "llama-2-7b", "--gpu", "mi300x"});
  CHECK(has(amd.out, "ROCm0 (mi300x)"));
  CHECK_FALSE(has(amd.out, "CUDA0"));
  const auto mac = run_cli({"gguf-fit", "--model", "llama-2-7b", "--gpu", "apple-m3-max-128gb"});
  CHECK(has(mac.out, "MTL0 (apple-m3-max-128gb)"));
  const auto fit =
      run_cli({"fit", "--params", "7B", "--precision", "bf16", "--mode", "infer", "--gpu", "mi300x"});
  CHECK(has(fit.out, "for its ROCm/HIP context: no measured figure, the H200's CUDA one stands in"));
  CHECK_FALSE(has(fit.out, "CUDA context"));
}
