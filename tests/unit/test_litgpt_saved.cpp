// The activation ledger under --framework litgpt against one Lit-GPT 8641822 block measured with
// saved_tensors_hooks (tests/data/litgpt_cpu_saved.json, from bench/accuracy/litgpt_saved.py:
// torch on the CPU, bf16, base weights frozen, LoRA r=8 on q and v with dropout 0.05). The CPU
// differs from CUDA in two dtypes, read from the measurement: the dropout mask (bf16 there, 1 byte
// on CUDA) and LayerNorm's mean and rstd (bf16 there, fp32 on CUDA); zero_pad's int64 index is
// batch independent and not counted. With those, one layer must match to the byte.

#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include <memplan/lora.hpp>
#include "core/memory/activations.hpp"

using namespace memplan;
using nlohmann::json;

TEST_CASE("Lit-GPT block: the ledger's layer equals the measured saved tensors", "[activations][litgpt]") {
  std::ifstream in(std::string(MEMPLAN_TEST_DATA_DIR) + "/litgpt_cpu_saved.json");
  REQUIRE(in.good());
  const json doc = json::parse(in);
  size_t cases = 0;
  for (const json& c : doc.at("cases")) {
    INFO(c.at("case").get<std::string>());
    const bool neox = c.at("neox").get<bool>();
    TransformerArch a;
    a.model_type = neox ? "gpt_neox" : "llama";
    a.layers = 2;
    a.hidden = c.at("hidden");
    a.heads = c.at("heads");
    a.kv_heads = a.heads;
    a.intermediate = c.at("intermediate");
    a.vocab = 256;
    a.gated_mlp = !neox;
    a.activation = neox ? "gelu" : "silu";
    a.norm = neox ? "layernorm" : "rmsnorm";
    a.parallel_attention = neox;
    a.fused_qkv = neox;
    a.bias = neox;
    ActivationOptions o;
    o.batch = c.at("batch");
    o.seq = c.at("seq");
    o.act_cost = {2, 1};
    o.act_format = "bf16";
    o.loss = Loss::chunked;
    o.litgpt = true;
    LoraTargets t = parse_lora_targets("--lora-targets", "q,v", c.at("lora_rank"));
    t.fp32_adapters = false;
    t.dropout = c.at("lora_dropout");
    o.lora = t;
    const ActivationLedger l = transformer_activations(a, o);
    const uint64_t measured =
        c.at("saved_bytes_cpu").get<uint64_t>() - c.at("dropout_mask_bytes_cpu").get<uint64_t>() / 2 +
        c.at("layernorm_stats_bytes_cpu").get<uint64_t>() - c.at("index_bytes").get<uint64_t>();
    CHECK(l.layer_bytes == measured);
    ++cases;
  }
  CHECK(cases == 2);
}
