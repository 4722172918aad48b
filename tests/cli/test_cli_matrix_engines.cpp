// The consistency matrix, engines and GPU layouts: gguf-fit counts the weights and KV cache estimate
// counts; several GPUs never need less per GPU than the replica they hold; --gpus N for inference is
// --tp N; max-batch's effective batch is micro-batch x accumulation x data-parallel ranks.

#include <string>
#include <vector>

#include "matrix_harness.hpp"

using memplan::test::Args;
using memplan::test::hf_config;
using memplan::test::json_of;
using memplan::test::required_on;
using memplan::test::term;
using memplan::test::with;
using nlohmann::json;

TEST_CASE("matrix: gguf-fit counts the weights and KV cache estimate counts", "[cli][matrix]") {
  // Models without sliding windows (llama.cpp gives window layers a padded cache of their own); the MoE
  // and MLA ones included (issue 27: gguf-fit counted every expert at the dense width, MLA's V at K's).
  for (const char* config : {"Meta-Llama-3-8B.json", "Qwen3-30B-A3B.json", "DeepSeek-R1.json",
                             "Mistral-7B-v0.1.json", "Qwen2.5-7B.json", "Mixtral-8x7B-v0.1.json"}) {
    for (const char* type : {"q4_k_m", "q8_0", "q2_k"}) {
      INFO(config << " " << type);
      const json g = json_of({"gguf-fit", "--config", hf_config(config), "--quantize", type, "--ctx-size",
                              "4096", "--gpu", "h200"});
      uint64_t weights = g.at("token_embd_bytes").get<uint64_t>() + g.at("output_bytes").get<uint64_t>();
      for (const auto& b : g.at("layer_bytes")) weights += b.get<uint64_t>();
      const json e = json_of({"estimate", "--config", hf_config(config), "--quantize", type, "--mode",
                              "infer", "--seq", "4096", "--kv-format", "fp16", "--gpu", "h200"});
      CHECK(weights == term(e, "parameters"));
      CHECK(g.at("kv_swa_cells") == 0);
      CHECK(g.at("kv_layer_bytes").get<uint64_t>() * g.at("layers").get<uint64_t>() == term(e, "kv_cache"));
    }
  }
}

TEST_CASE("matrix: data parallelism never needs less per GPU than one GPU", "[cli][matrix]") {
  // issue 27: --gpus 2 (DDP) said "fits, 69.4 GiB" where one GPU said "no, 79.9 GiB" for the same
  // per-GPU load. DDP keeps a whole replica on every rank, and its gradient buckets besides.
  for (const Args& run : std::vector<Args>{
           {"--model", "phi-3-mini", "--precision", "amp-bf16", "--optimizer", "adamw", "--seq", "2048"},
           {"--model", "tinyllama-1.1b", "--precision", "bf16", "--optimizer", "adamw", "--seq", "1024",
            "--batch", "4"},
           {"--model", "qwen3-8b", "--lora", "16", "--seq", "1024"}}) {
    INFO(run[1]);
    const json one = json_of(with(with({"fit"}, run), {"--gpu", "h100-80gb"}));
    for (const char* gpus : {"2", "8"}) {
      INFO(gpus << " GPUs");
      const json ddp = json_of(with(with({"fit"}, run), {"--gpu", "h100-80gb", "--gpus", gpus}));
      CHECK(required_on(ddp, "h100-80gb") >= required_on(one, "h100-80gb"));
    }
  }
}

TEST_CASE("matrix: inference over --gpus N is tensor parallelism over N", "[cli][matrix]") {
  // issue 27: --gpus 8 --mode infer without --tp was ignored (DeepSeek-V3 630 GiB, "no").
  for (const auto& [flag, model] :
       std::vector<std::pair<std::string, std::string>>{{"--model", "llama-3-70b"},
                                                        {"--config", hf_config("DeepSeek-R1.json")},
                                                        {"--model", "mixtral-8x7b"}}) {
    INFO(model);
    const Args base = {"estimate", flag, model, "--mode", "infer", "--seq", "4096", "--gpu", "h100-80gb"};
    const json gpus = json_of(with(base, {"--gpus", "8"}));
    const json tp = json_of(with(base, {"--tp", "8"}));
    const json one = json_of(base);
    CHECK(required_on(gpus, "h100-80gb") == required_on(tp, "h100-80gb"));
    CHECK(required_on(gpus, "h100-80gb") < required_on(one, "h100-80gb"));
  }
}

TEST_CASE("matrix: max-batch's effective batch counts the data-parallel ranks", "[cli][matrix]") {
  // issue 27: --gpus 8 --effective-batch 512 printed 6 accumulation steps where 1 is enough.
  const json mb = json_of({"max-batch", "--model", "gpt2", "--precision", "amp-bf16", "--optimizer", "adamw",
                           "--seq", "1024", "--gpus", "8", "--effective-batch", "512", "--gpu", "h100-80gb"});
  const json& r = mb.at("results").at(0);
  const uint64_t micro = r.at("micro_batch"), steps = r.at("accumulation_steps"),
                 ranks = r.at("data_parallel_ranks");
  CHECK(ranks == 8);
  CHECK(micro * steps * ranks == 512);
  CHECK(r.at("effective_batch") == 512);
}
