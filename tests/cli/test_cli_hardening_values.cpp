// Issue 32, second pass: wrong numbers that exited 0. A GPU of negative, zero, NaN or infinite memory
// in diff's and why-oom's inputs, why-oom's KV cache products past 2^64, and --seq far past the
// positions a model was trained for. Each is one line on stderr, exit 2.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "cli_harness.hpp"

namespace fs = std::filesystem;
using memplan::test::line_count;
using memplan::test::run_cli;

namespace {

struct ValuesDir {
  fs::path path = fs::temp_directory_path() / ("memplan_values32_" + std::to_string(::getpid()));
  ValuesDir() { fs::create_directories(path); }
  ~ValuesDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

void check_refused(const std::vector<std::string>& args, const std::string& error) {
  const auto r = run_cli(args);
  INFO(args.front() << " " << args.at(1) << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find(error) != std::string::npos);
  CHECK(line_count(r.err) == 1);
  CHECK(r.out.empty());
}

// PyTorch 2.4's message (tests/data/oom_messages/pytorch_2024_full.txt) with `total` as the capacity.
std::string pytorch_oom(const std::string& total) {
  return "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. GPU 0 has a total "
         "capacity "
         "of " +
         total +
         " of which 11.06 MiB is free. Including non-PyTorch memory, this process has 23.60 GiB memory in "
         "use. Of the allocated memory 22.90 GiB is allocated by PyTorch, and 194.87 MiB is reserved by "
         "PyTorch but unallocated.\n";
}

}  // namespace

TEST_CASE("issue 32: diff refuses a GPU of negative, zero, NaN or infinite memory", "[cli][diff]") {
  ValuesDir d;
  const auto fit = [&](const std::string& name, const std::string& memory, const std::string& spare) {
    return d.write(name, R"({"schema": "memplan.fit/1", "total_bytes": 40, "required_bytes": 40, "fit": [)"
                         R"({"gpu": "t4", "memory_bytes": )" +
                             memory + R"(, "required_bytes": 40, "spare_bytes": )" + spare +
                             R"(, "verdict": "no"}]})");
  };
  // Zero passed before (spare 0 - 40 = -40 is consistent); a GPU of no memory is no GPU.
  const std::string zero = fit("zero.json", "0", "-40");
  check_refused({"diff", zero, zero}, "fit[0]: \"memory_bytes\" is 0 (expected the GPU's memory in bytes");
  for (const auto& [name, memory] : std::vector<std::pair<std::string, std::string>>{
           {"negative.json", "-80000000000"}, {"fraction.json", "1.5"}, {"float.json", "8e10"}}) {
    const std::string f = fit(name, memory, "0");
    check_refused({"diff", f, f}, "\"memory_bytes\" is missing or not a byte count");
  }
  for (const std::string memory : {"NaN", "Infinity", "1e400"}) {
    const std::string f = fit("bad.json", memory, "0");
    check_refused({"diff", f, f}, "the input is not valid JSON");
  }
  // A plan file's GPU goes through --gpu's own rule: zero, negative, infinite, NaN.
  for (const std::string gpu : {"0GB", "-24GB", "infGB", "nanGB"}) {
    const std::string plan = d.write("plan.json", R"({"params": "7e9", "gpu": ")" + gpu + "\"}");
    check_refused({"diff", plan, plan}, "--gpu: \"" + gpu + "\"");
  }
}

TEST_CASE("issue 32: why-oom refuses a negative, zero, NaN or infinite GPU total capacity",
          "[cli][why-oom]") {
  ValuesDir d;
  // The real message reads (its total is 23.65 x 2^30 = 25,393,994,137.6 -> 25,393,994,138 B); the others
  // dropped the row without a word, or read a GPU of 0 bytes.
  const std::string ok = d.write("ok.log", pytorch_oom("23.65 GiB"));
  const auto r = run_cli({"why-oom", ok, "--format", "json"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("\"total_bytes\": 25393994138") != std::string::npos);
  for (const std::string total : {"-23.65 GiB", "0 bytes", "inf GiB", "nan GiB", "1e400 GiB"}) {
    const std::string f = d.write("bad.log", pytorch_oom(total));
    check_refused({"why-oom", f}, "FILE: line 1: the GPU's total capacity is not a positive size");
  }
}

TEST_CASE("issue 32: why-oom's KV cache of the message's tokens past 2^64 exits 2, not wrapped",
          "[cli][why-oom]") {
  ValuesDir d;
  // Llama 2 7B in fp16: 2 (K, V) x 32 layers x 4,096 x 2 B = 524,288 B per token; the log's
  // 999,999,999,999,999,999 tokens x 524,288 B = 5.2e23 B > 2^64 = 1.8e19.
  const std::string tokens = d.write(
      "tokens.log",
      "ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can be "
      "stored in KV cache (999999999999999999). Try increasing `gpu_memory_utilization`\n");
  check_refused({"why-oom", tokens, "--model", "llama-2-7b", "--gpu", "a100-80gb"},
                "FILE: the KV cache of the message's tokens: the result exceeds 2^64 bytes");
  const std::string length = d.write(
      "length.log",
      "ValueError: The model's max seq len (999999999999999999) is larger than the maximum number of tokens "
      "that can be stored in KV cache (3664). Try increasing `gpu_memory_utilization`\n");
  check_refused({"why-oom", length, "--model", "llama-2-7b", "--gpu", "a100-80gb"},
                "line 1: the message's max seq len 999,999,999,999,999,999 is more than the 4,294,967,296");
  // The same message in range is read: 3,664 tokens x 524,288 B = 1,920,991,232 B (1.8 GiB).
  const std::string fine = d.write(
      "fine.log",
      "ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can be "
      "stored in KV cache (3664). Try increasing `gpu_memory_utilization`\n");
  const auto r = run_cli({"why-oom", fine, "--model", "llama-2-7b", "--gpu", "a100-80gb"});
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("KV cache: 524,288 B per token") != std::string::npos);
}

TEST_CASE("issue 32: --seq past 32x a rotary model's positions is refused by every command that takes it",
          "[cli][seq][many-runs]") {
  // Llama 2 7B: max_position_embeddings 4,096, rotary; 32 x 4,096 = 131,072 is the most planned
  // (YaRN's 128k extension of it). --seq 1e7 gave 101.8 TiB of activations, exit 0.
  const std::string said = "--seq: 10,000,000 tokens are more than 32 times the 4,096 positions";
  const std::vector<std::string> model = {"--model", "llama-2-7b", "--seq", "1e7"};
  const auto with = [&](std::vector<std::string> head) {
    head.insert(head.end(), model.begin(), model.end());
    return head;
  };
  check_refused(with({"estimate"}), said);
  check_refused(with({"fit", "--gpu", "h100-80gb"}), said);
  check_refused(with({"max-batch", "--gpu", "h100-80gb"}), said);
  check_refused(with({"advise", "--gpu", "h100-80gb"}), said);
  check_refused(with({"plot", "--vs", "batch"}), said);
  // models --fits says it in each model's row, as for a learned table.
  const auto fits = run_cli({"models", "--fits", "h100-80gb", "--seq", "1e7"});
  const size_t row = fits.out.find("\n  llama-2-7b ");
  REQUIRE(row != std::string::npos);
  CHECK(fits.out.substr(row, fits.out.find('\n', row + 1) - row).find("more than 32 times the 4,096") !=
        std::string::npos);
  ValuesDir d;
  const std::string plan = d.write("plan.json", R"({"model": "llama-2-7b", "seq": 10000000})");
  check_refused({"estimate", "--plan", plan}, "10,000,000 tokens are more than 32 times the 4,096 positions");
  // 131,072 tokens (32x) are planned, with the untrained-context note; 131,073 are not.
  const auto at = run_cli({"estimate", "--model", "llama-2-7b", "--seq", "131072"});
  CHECK(at.code == 0);
  CHECK(at.out.find("is longer than the 4,096 positions the model was trained for") != std::string::npos);
  check_refused({"estimate", "--model", "llama-2-7b", "--seq", "131073"}, "at most 131,072");
  // A model without stated positions (--params) has no such bound; GPT-2's learned table stays 1,024.
  CHECK(run_cli({"estimate", "--params", "7e9", "--seq", "1e6"}).code == 0);
  check_refused({"estimate", "--model", "gpt2", "--seq", "1025"}, "1,024 learned positions");
}
