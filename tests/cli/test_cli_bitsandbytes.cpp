// QLoRA's bitsandbytes layers: what a 4-bit matmul keeps by release (--bitsandbytes,
// bitsandbytes_release.hpp), the format its output takes under autocast, and peft's bnb LoRA layers
// under a Trainer's autocast, against the arithmetic of the tensors bitsandbytes 0.50.2 and peft
// 0.21.2 make (bitsandbytes nn/modules.py Linear4bit.forward, autograd/_functions.py MatMul4Bit; peft
// tuners/lora/bnb.py Linear4bit.forward; measured with bench/frameworks/measure_qlora.py,
// docs/accuracy.md).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memplan/bitsandbytes_release.hpp>
#include <memplan/error.hpp>

#include "cli_harness.hpp"

using memplan::test::run_cli;
using nlohmann::json;

namespace {

// Llama-2-7B, LoRA r=16 on q and v, batch 2 x seq 512 (1,024 tokens; h 4,096, ff 11,008).
uint64_t qlora_activations(const std::vector<std::string>& more) {
  std::vector<std::string> args = {"estimate", "--model", "llama-2-7b", "--seq",    "512", "--batch",
                                   "2",        "--lora",  "16",         "--format", "json"};
  args.insert(args.end(), more.begin(), more.end());
  const auto r = run_cli(args);
  REQUIRE(r.code == 0);
  return json::parse(r.out)["breakdown"]["activations"].get<uint64_t>();
}

}  // namespace

TEST_CASE("bitsandbytes release: releases parse, others are refused", "[bitsandbytes]") {
  using memplan::parse_bitsandbytes_release;
  CHECK(to_string(parse_bitsandbytes_release("--bitsandbytes", "0.41")) == "0.41.0");
  CHECK(to_string(parse_bitsandbytes_release("--bitsandbytes", "0.43.2")) == "0.43.2");
  CHECK(to_string(parse_bitsandbytes_release("--bitsandbytes", "0.45.0.dev0")) == "0.45.0");
  CHECK(to_string(parse_bitsandbytes_release("--bitsandbytes", "1.0.1+cu128")) == "1.0.1");
  CHECK(parse_bitsandbytes_release("b", "0.43.1").matmul_4bit_keeps_input());
  CHECK_FALSE(parse_bitsandbytes_release("b", "0.43.2").matmul_4bit_keeps_input());
  CHECK_FALSE(memplan::BitsandbytesRelease{}.matmul_4bit_keeps_input());  // 0.50.2
  for (const char* bad : {"0.38", "0.38.9", "x", "0.", "0.41-1", "10.0", ""})
    CHECK_THROWS_AS(parse_bitsandbytes_release("--bitsandbytes", bad), memplan::Error);
}

TEST_CASE("bitsandbytes: under autocast a 4-bit gate/up matmul returns its fp32 input's format",
          "[bitsandbytes]") {
  // Linear4bit.forward: `bnb.matmul_4bit(x.to(compute_dtype), ...).to(inp_dtype)`. The amp
  // recipe's residual stream is fp32 (peft's prepare_model_for_kbit_training leaves every
  // non-4-bit parameter fp32), so the gate and up outputs and silu(gate) are fp32 where
  // nn.Linear under autocast gives bf16: 32 layers x 3 x 1,024 x 11,008 x (4 - 2) B more.
  const uint64_t nf4 = qlora_activations({"--precision", "amp-bf16", "--quantize", "nf4"});
  const uint64_t plain = qlora_activations({"--precision", "amp-bf16"});
  CHECK(nf4 - plain == 32ull * 3 * 1024 * 11008 * 2);
}

TEST_CASE("bitsandbytes: peft's 4-bit LoRA layers under a Trainer's autocast make no fp32 input copy",
          "[bitsandbytes]") {
  // peft's bnb Linear4bit casts x to the fp32 adapters' dtype only when autocast is off; a Trainer
  // (bf16=True) runs the bf16 model under autocast. Per layer: the two fp32 copies of the
  // attention norm's output (2 x 1,024 x 4,096 x 4 B) go, the bf16 output they were cast from is
  // kept once (1,024 x 4,096 x 2 B), and x.A of q and v is bf16 (2 x 1,024 x 16 x 2 B less).
  const uint64_t own_loop = qlora_activations({"--precision", "bf16", "--quantize", "nf4"});
  const uint64_t trainer =
      qlora_activations({"--precision", "bf16", "--quantize", "nf4", "--framework", "trainer"});
  CHECK(own_loop - trainer == 32ull * (2 * 1024 * 4096 * 4 - 1024 * 4096 * 2 + 2 * 1024 * 16 * 2));
  // A plain (not 4-bit) LoRA layer casts its input whatever autocast says (peft layer.py).
  CHECK(qlora_activations({"--precision", "bf16"}) ==
        qlora_activations({"--precision", "bf16", "--framework", "trainer"}));
}

TEST_CASE("bitsandbytes: before 0.43.2 every frozen 4-bit matmul keeps its input", "[bitsandbytes]") {
  // The frozen k (shares q/v's input, the attention norm output, kept by q and v's adapters as
  // fp32 copies: bitsandbytes keeps the bf16 one, 1,024 x 4,096 x 2 B), gate/up (the MLP norm
  // output, the same) and down (silu(gate) x up, 1,024 x 11,008 x 2 B); layer 0's q/k/v input
  // needs no gradient.
  const uint64_t now = qlora_activations({"--precision", "bf16", "--quantize", "nf4"});
  const uint64_t old =
      qlora_activations({"--precision", "bf16", "--quantize", "nf4", "--bitsandbytes", "0.43.1"});
  CHECK(old - now == 32ull * (1024 * 4096 * 2 + 1024 * 11008 * 2) + 31ull * 1024 * 4096 * 2);
}

TEST_CASE("4-bit weights: the last layer's backward dequantises the down projection", "[bitsandbytes]") {
  // MatMul4Bit.backward (and torchao's LinearNF4) rebuilds the frozen weight whole, in bf16, for
  // the input gradient. torchtune QLoRA on Llama-2-7B, batch 4 x seq 2048 (8,192 tokens): the last
  // layer's gradients, 8,192 x (3 x 11,008) x 2 B + 8,192 x 4,096 x 2 B = 608,174,080 B, beside
  // the down projection's 4,096 x 11,008 weight x 2 B.
  const auto r =
      run_cli({"estimate", "--model", "llama-2-7b", "--quantize", "nf4", "--lora", "16", "--precision",
               "bf16", "--seq", "2048", "--batch", "4", "--framework", "torchtune", "--format", "json"});
  REQUIRE(r.code == 0);
  const json tl = json::parse(r.out)["timeline"];
  uint64_t backward = 0;
  for (const json& p : tl)
    if (p["phase"] == "backward") backward = p["transient"].get<uint64_t>();
  CHECK(backward == 8192ull * 3 * 11008 * 2 + 8192ull * 4096 * 2 + 4096ull * 11008 * 2);
}
