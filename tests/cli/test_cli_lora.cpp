// --lora R [--lora-targets]: LoRA / QLoRA runs on estimate, fit and max-batch.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using memplan::test::line_count;
using memplan::test::run_cli;
using nlohmann::json;

namespace {

json lora_estimate_json(std::vector<std::string> args) {
  args.insert(args.begin(), "estimate");
  args.insert(args.end(), {"--format", "json"});
  auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return json::parse(r.out);
}

const std::vector<std::string> k_qlora = {"--model",    "llama-2-7b", "--lora",      "16",
                                          "--quantize", "nf4",        "--precision", "bf16",
                                          "--seq",      "2048",       "--gpu",       "rtx-4090"};

}  // namespace

TEST_CASE("QLoRA on Llama-2-7B: the adapters are the trainable parameters", "[cli][lora]") {
  const json doc = lora_estimate_json(k_qlora);
  // peft's count for r=16 on q_proj,v_proj: 32 layers x 2 matrices x 16 x (4096 + 4096).
  CHECK(doc["model"]["trainable_parameters"] == 32ull * 2 * 16 * (4096 + 4096));
  CHECK(doc["model"]["trainable_parameters"] == 8388608);
  CHECK(doc["model"]["lora"]["parameters"] == 8388608);
  CHECK(doc["model"]["lora"]["matrices"] == 64);
  CHECK(doc["model"]["parameters"] == 6738415616ull + 8388608);  // base + adapters
  CHECK(doc["inputs"]["lora"] == 16);
  CHECK(doc["inputs"]["lora_targets"] == "q,v");
  CHECK(doc["inputs"]["trainable"].is_null());
  // Gradients and AdamW state only for the adapters, in fp32: peft (>= 0.12) keeps the adapters in
  // fp32 on a half model (autocast_adapter_dtype=True, its default).
  CHECK(doc["breakdown"]["gradients"] == 8388608ull * 4);
  CHECK(doc["breakdown"]["optimizer_state"] == 8388608ull * 2 * 4 + 128 * 4);  // + step per A/B tensor
  // Frozen base nf4 (4.5 bits) but for the token embedding and the LM head (32000 x 4096 each),
  // which transformers' bitsandbytes integration leaves in bf16, + adapters fp32.
  const uint64_t tables = 2ull * 32000 * 4096;
  CHECK(doc["breakdown"]["parameters"] == (6738415616ull - tables) * 9 / 16 + tables * 2 + 8388608ull * 4);

  // Activations, by hand (bf16, sdpa, CUDA; s = 2048, h = 4096, ff = 11008, 32 heads, r = 16):
  //   layers 1..31: attention norm fp32 input 2048*4096*4 = 33,554,432 + rsqrt 8,192; its bf16
  //   output cast to fp32 once per adapter (peft's fp32 adapters: q and v) 2 x 33,554,432; x.A for
  //   q and v in fp32 2 x 2048*16*4 = 262,144; sdpa q, k, v, output 4 x 16,777,216 + lse
  //   32*2048*4 = 262,144; MLP norm 33,554,432 + 8,192; gate, silu(gate), up 3 x 2048*11008*2 =
  //   135,266,304 = 337,133,568 (measured on an H200 with peft 0.21: two fp32 copies of the
  //   attention norm's output per layer). bitsandbytes 0.50.2's 4-bit matmuls keep no input
  //   (MatMul4Bit keeps (None, B) from 0.43.2, bitsandbytes#1270).
  //   layer 0: its input needs no gradient, so no attention norm kept: 337,133,568 - 33,562,624.
  //   outside: final norm 33,562,624; logits bf16 131,072,000 + fp32 262,144,000 (held);
  //   log-softmax 262,144,000; the shifted labels transformers' ForCausalLMLoss keeps, int64
  //   2048 x 8 = 16,384.
  const uint64_t outside = 33562624 + 131072000 + 2 * 262144000 + 2048 * 8;
  CHECK(doc["breakdown"]["activations"] == (337133568 - 33562624) + 31ull * 337133568 + outside);
  // Before 0.43.2 MatMul4Bit kept its input A: the frozen q/k/v's (the attention norm output,
  // 16,777,216), gate/up's (the MLP norm output, 16,777,216) and down's (silu(gate) x up,
  // 2048*11008*2 = 45,088,768): 415,776,768 a layer; layer 0 keeps no q/k/v input either.
  std::vector<std::string> old_bnb = k_qlora;
  old_bnb.insert(old_bnb.end(), {"--bitsandbytes", "0.43.1"});
  const json old = lora_estimate_json(old_bnb);
  CHECK(old["inputs"]["bitsandbytes"] == "0.43.1");
  const uint64_t layer = 415776768, first = layer - 33562624 - 16777216;
  CHECK(old["breakdown"]["activations"] == first + 31 * layer + outside);
  CHECK(lora_estimate_json([&] {
          std::vector<std::string> v = k_qlora;
          v.insert(v.end(), {"--bitsandbytes", "0.43.2"});
          return v;
        }())["breakdown"]["activations"] == doc["breakdown"]["activations"]);

  std::vector<std::string> full = k_qlora;
  full.erase(full.begin() + 2, full.begin() + 6);  // drop --lora 16 (and --quantize nf4: nothing is frozen)
  const json ft = lora_estimate_json(full);
  // With peft's fp32 adapters and bitsandbytes before 0.43.2, QLoRA keeps more than the full fine-tune (two
  // fp32 copies per layer where the full fine-tune keeps the norms' normalised tensors); with adapters in
  // bf16 it keeps less (bitsandbytes keeps the frozen matmuls' inputs as a trained Linear would, the norms'
  // normalised tensors are not kept).
  CHECK(old["breakdown"]["activations"].get<uint64_t>() > ft["breakdown"]["activations"].get<uint64_t>());
  std::vector<std::string> base = old_bnb;
  base.insert(base.end(), {"--lora-dtype", "base"});
  // By hand, full fine-tune minus QLoRA with bf16 adapters: per layer the two norms' normalised
  // tensors (2 x 16,777,216) less x.A for q and v (131,072) = 33,423,360; layer 0 also its
  // attention norm (33,562,624); outside, the final norm's normalised tensor and the LM head's
  // input (2 x 16,777,216).
  CHECK(lora_estimate_json(base)["breakdown"]["activations"].get<uint64_t>() ==
        ft["breakdown"]["activations"].get<uint64_t>() - (31ull * 33423360 + 33423360 + 33562624 + 33554432));
}

TEST_CASE("lora: fit and max-batch, GPT-2's fused c_attn, all seven Llama matrices", "[cli][lora]") {
  auto fit = run_cli({"fit", "--model", "llama-2-7b", "--lora", "16", "--quantize", "nf4", "--precision",
                      "bf16", "--seq", "2048", "--gpu", "rtx-4090"});
  CHECK(fit.code == 0);
  auto mb = run_cli({"max-batch", "--model", "llama-2-7b", "--lora", "16", "--quantize", "nf4", "--precision",
                     "bf16", "--seq", "2048", "--gpu", "rtx-4090"});
  CHECK(mb.code == 0);
  // GPT-2 small, c_attn (768 -> 2304): 12 x 8 x (768 + 2304) = 294,912 (peft's count).
  const json g =
      lora_estimate_json({"--model", "gpt2", "--lora", "8", "--lora-targets", "c_attn", "--seq", "512"});
  CHECK(g["model"]["trainable_parameters"] == 12 * 8 * (768 + 2304));
  CHECK(g["model"]["lora"]["targets"] == "c_attn (fused q,k,v)");
  // All seven Llama matrices at r=8: 32 x 8 x (3 x (4096 + 4096) + 4096 + 4096 + 2 x (4096 + 11008)
  // + (11008 + 4096)) = 19,988,480.
  const json all = lora_estimate_json({"--model", "llama-2-7b", "--lora", "8", "--lora-targets", "all"});
  CHECK(all["model"]["trainable_parameters"] == 32ull * 8 * (4 * 8192 + 3 * 15104));
}

TEST_CASE("lora: bad input is one stderr line, exit 2, empty stdout", "[cli][lora][errors]") {
  struct Bad {
    std::vector<std::string> args;
    const char* fragment;
  };
  const Bad bad[] = {
      {{"estimate", "--model", "llama-2-7b", "--lora", "0"}, "--lora: \"0\" must be at least 1"},
      {{"estimate", "--model", "llama-2-7b", "--lora", "x"}, "--lora: \"x\" is not a number"},
      {{"estimate", "--model", "llama-2-7b", "--lora", "16", "--lora-targets", "x"},
       "--lora-targets: \"x\" is not a LoRA target (expected q, k, v, o, gate, up, down, c_attn, c_fc, "
       "c_proj or all"},
      {{"estimate", "--model", "llama-2-7b", "--lora", "16", "--lora-targets", "q_prj"},
       "did you mean \"q_proj\"?"},
      {{"estimate", "--model", "llama-2-7b", "--lora-targets", "q,v"}, "--lora-targets: needs --lora R"},
      {{"estimate", "--model", "llama-2-7b", "--lora", "16", "--trainable", "0.01"},
       "--lora: cannot be combined with --trainable"},
      {{"fit", "--model", "llama-2-7b", "--lora", "16", "--trainable", "0.01"},
       "cannot be combined with --trainable"},
      {{"estimate", "--params", "7B", "--lora", "16"}, "LoRA: needs a transformer architecture"},
      {{"estimate", "--model", "gpt2", "--lora", "8", "--lora-targets", "gate"},
       "--lora-targets: adapts no matrix"},
  };
  for (const Bad& b : bad) {
    auto r = run_cli(b.args);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(line_count(r.err) == 1);
    CHECK(r.err.find(b.fragment) != std::string::npos);
  }
}
