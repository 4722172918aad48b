// Loading QLoRA's 4-bit weights (core/memory/weight_load.hpp): transformers' allocator warm-up and
// its one-weight-at-a-time 16-bit staging, Lit-GPT's quantisation at construction and again at
// load, against the arithmetic of Llama 2 7B's tensors (h 4,096, ff 11,008, 32 layers, vocabulary
// 32,000; 6,738,415,616 parameters, the published count) and the loaders' code (transformers 5.24.0
// and 4.56 modeling_utils.py caching_allocator_warmup, core_model_loading.py; Lightning's
// BitsandbytesPrecision).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using memplan::test::run_cli;
using nlohmann::json;

namespace {

constexpr uint64_t k_params = 6'738'415'616;
constexpr uint64_t k_layer_matrices = 32ull * (4 * 4096 * 4096 + 3 * 4096 * 11008);  // quantised
constexpr uint64_t k_table = 32000ull * 4096;                                        // embedding, LM head

json qlora(const std::vector<std::string>& more, const char* batch = "2", const char* seq = "512") {
  std::vector<std::string> args = {"estimate", "--model",     "llama-2-7b", "--seq",    seq,
                                   "--batch",  batch,         "--lora",     "16",       "--quantize",
                                   "nf4",      "--precision", "bf16",       "--format", "json"};
  args.insert(args.end(), more.begin(), more.end());
  const auto r = run_cli(args);
  REQUIRE(r.code == 0);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("weight load: transformers 5 warms the allocator up with the 4-bit weights at half a byte",
          "[weight_load]") {
  const json d = qlora({});
  REQUIRE(d.contains("load"));
  // Linear4bit weights at 0.5 B, every other parameter (embedding, LM head, norms) at its 2 B.
  const uint64_t others = k_params - k_layer_matrices;
  CHECK(others == 2 * k_table + 65 * 4096);
  CHECK(d["load"]["warmup_bytes"].get<uint64_t>() == k_layer_matrices / 2 + others * 2);
  // The largest quantised weight is an MLP matrix, staged in bf16.
  CHECK(d["load"]["staging_elements"].get<uint64_t>() == 11008ull * 4096);
  CHECK(d["load"]["staging_bytes_per_element"].get<uint64_t>() == 2);
  // Below the final weights (absmax is not in the warm-up): the high point is the weights, the
  // last staging copies beside them at most.
  const uint64_t weights = d["breakdown"]["parameters"].get<uint64_t>();
  const uint64_t peak = d["load"]["peak_bytes"].get<uint64_t>();
  CHECK(peak >= weights);
  CHECK(peak <= weights + 11008ull * 4096 * 2);
  CHECK(d["peak_phase"] != "load");
}

TEST_CASE("weight load: transformers 4.51-4.57 warm up with 1 byte per parameter, a peak of its own",
          "[weight_load]") {
  // factor 4 over the meta model's 16-bit bytes: torch.empty(byte_count // 4, fp16) = 1 B/param.
  // At batch 1 x 64 tokens the step stays below it: the warm-up block is the run's peak, and the
  // allocator keeps its segment.
  const json d = qlora({"--transformers", "4.56"}, "1", "64");
  CHECK(d["load"]["warmup_bytes"].get<uint64_t>() == k_params);
  CHECK(d["peak_bytes"].get<uint64_t>() == k_params);
  CHECK(d["peak_phase"] == "load");
  CHECK(d["reserved_bytes"].get<uint64_t>() >= (k_params + (2u << 20) - 1) / (2u << 20) * (2u << 20));
  CHECK(d["reserved"]["requested_bytes"].get<uint64_t>() == d["peak_bytes"].get<uint64_t>());
}

TEST_CASE("weight load: before 4.51 a quantised load has no warm-up", "[weight_load]") {
  for (const char* release : {"4.50", "4.45"}) {
    const json d = qlora({"--transformers", release});
    CHECK(d["load"]["warmup_bytes"].get<uint64_t>() == 0);
    CHECK(d["load"]["peak_bytes"].get<uint64_t>() > d["breakdown"]["parameters"].get<uint64_t>());
  }
}

TEST_CASE("weight load: Lit-GPT quantises its LM head again from an fp16 copy while all else is loaded",
          "[weight_load]") {
  // The head is a Linear there (quantised) and the first module loaded: its fp16 copy (2 B) and the
  // new 4-bit data (between 4 and 5 bits per element) beside every weight.
  const json d = qlora({"--framework", "litgpt"});
  CHECK(d["load"]["staging_elements"].get<uint64_t>() == k_table);
  const uint64_t over =
      d["load"]["peak_bytes"].get<uint64_t>() - d["breakdown"]["parameters"].get<uint64_t>();
  CHECK(over >= 2 * k_table + k_table / 2);
  CHECK(over <= 2 * k_table + k_table * 5 / 8);
  CHECK(d["load"]["warmup_bytes"].get<uint64_t>() == 0);
}

TEST_CASE("weight load: direct where nothing is quantised on the GPU", "[weight_load]") {
  CHECK_FALSE(qlora({"--framework", "torchtune"}).contains("load"));  // torchao's NF4: not modelled
  const auto r = run_cli({"estimate", "--model", "llama-2-7b", "--seq", "512", "--batch", "2", "--lora", "16",
                          "--precision", "bf16", "--format", "json"});
  REQUIRE(r.code == 0);
  CHECK_FALSE(json::parse(r.out).contains("load"));
}

TEST_CASE("weight load: the warm-up equals transformers 5.24's own count", "[weight_load]") {
  // bench/frameworks/measure_load_warmup.py: transformers 5.24.0's get_total_byte_count over the
  // bnb 4-bit quantizer's meta model, built from each config.json as from_pretrained builds it.
  const std::vector<std::pair<const char*, uint64_t>> rows = {{"Llama-2-7b-hf", 3'762'823'168},
                                                              {"Qwen2.5-7B", 5'443'300'352},
                                                              {"Qwen3-4B", 2'594'962'432},
                                                              {"OLMo-2-1124-7B", 4'883'226'624},
                                                              {"aya-23-8B", 5'587'083'264},
                                                              {"gemma-2-2b", 2'192'269'824},
                                                              {"Mixtral-8x7B-v0.1", 91'392'319'488},
                                                              {"Qwen3-30B-A3B", 59'705'290'752},
                                                              {"OLMoE-1B-7B-0125-Instruct", 13'435'670'528},
                                                              {"gpt-oss-20b", 40'873'999'488}};
  for (const auto& [name, bytes] : rows) {
    const auto r = run_cli(
        {"estimate", "--config", std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/" + name + ".json",
         "--seq", "512", "--lora", "16", "--quantize", "nf4", "--precision", "bf16", "--format", "json"});
    REQUIRE(r.code == 0);
    INFO(name);
    CHECK(json::parse(r.out)["load"]["warmup_bytes"].get<uint64_t>() == bytes);
  }
}

TEST_CASE("weight load: transformers 5 leaves the fused MoE experts and the router 16-bit", "[weight_load]") {
  // Mixtral-8x7B: 32 layers x (8 experts x 3 x 4,096 x 14,336 + the 8 x 4,096 router), bf16, beside
  // the 4-bit attention (bitsandbytes#1849). transformers 4.x (one nn.Linear per expert) and
  // unsloth (unsloth-zoo#527) quantise them.
  const uint64_t experts = 32ull * (8ull * 3 * 4096 * 14336 + 8 * 4096);
  auto parameters = [](const std::vector<std::string>& more) {
    std::vector<std::string> args = {
        "estimate",
        "--config",
        std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/Mixtral-8x7B-v0.1.json",
        "--seq",
        "512",
        "--lora",
        "16",
        "--quantize",
        "nf4",
        "--precision",
        "bf16",
        "--format",
        "json"};
    args.insert(args.end(), more.begin(), more.end());
    const auto r = run_cli(args);
    REQUIRE(r.code == 0);
    return json::parse(r.out)["breakdown"]["parameters"].get<uint64_t>();
  };
  const uint64_t v5 = parameters({});
  const uint64_t v4 = parameters({"--transformers", "4.57"});
  // The same numbers at 2 B instead of nf4's 0.5625 B (4.5 bits): 1.4375 B each, within rounding.
  const double extra = static_cast<double>(v5 - v4);
  CHECK(extra == Approx(static_cast<double>(experts) * 1.4375).epsilon(1e-6));
  CHECK(parameters({"--framework", "unsloth"}) < v4 + experts / 16);
}

TEST_CASE("weight load: transformers 5.5 on leaves Falcon's FalconLinear layers unquantised",
          "[weight_load]") {
  // replace_with_bnb_linear converts `type(module) is nn.Linear` from 5.5 (isinstance before):
  // Falcon-7B's 6,921,720,704 parameters (transformers 5.24's meta model counts 13,843,441,408 B of
  // warm-up for them, 2 B each; the Hub shows 6.92B) all stay bf16, the fp32 adapters beside them;
  // 5.4 quantises the layers.
  auto run = [](const char* release) {
    const auto r = run_cli({"estimate", "--config",
                            std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/falcon-7b-instruct.json",
                            "--seq", "512", "--lora", "16", "--quantize", "nf4", "--precision", "bf16",
                            "--transformers", release, "--format", "json"});
    REQUIRE(r.code == 0);
    return json::parse(r.out);
  };
  const json d = run("5.5");
  const uint64_t adapters = d["model"]["lora"]["parameters"].get<uint64_t>();
  CHECK(d["model"]["parameters"].get<uint64_t>() - adapters == 6'921'720'704);
  CHECK(d["breakdown"]["parameters"].get<uint64_t>() == 6'921'720'704ull * 2 + adapters * 4);
  CHECK(d["load"]["staging_elements"].get<uint64_t>() == 0);
  CHECK(run("5.4")["breakdown"]["parameters"].get<uint64_t>() < 6'921'720'704ull);
}
