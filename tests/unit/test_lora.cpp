// LoRA targets and adapter counts against peft's published "trainable params" figures.
#include <catch2/catch.hpp>

#include "cli/render_estimate.hpp"

#include <memplan/error.hpp>
#include <memplan/lora.hpp>

using namespace memplan;

namespace {

ModelSpec llama2_7b() {
  TransformerArch a;
  a.model_type = "llama";
  a.layers = 32;
  a.hidden = 4096;
  a.heads = 32;
  a.intermediate = 11008;
  a.vocab = 32000;
  a.gated_mlp = true;
  ModelSpec m;
  m.arch = a;
  return m;
}

}  // namespace

TEST_CASE("lora targets: short names, Hugging Face names, GPT-2 names, all", "[lora]") {
  LoraTargets t = parse_lora_targets("--lora-targets", "q_proj,V", 16);
  CHECK(t.rank == 16);
  CHECK((t.q && t.v && !t.k && !t.o && !t.gate && !t.up && !t.down));
  t = parse_lora_targets("--lora-targets", "c_proj", 8);  // peft matches attn.c_proj and mlp.c_proj
  CHECK((t.o && t.down && !t.q && !t.up));
  t = parse_lora_targets("--lora-targets", "c_attn,c_fc", 8);
  CHECK((t.q && t.k && t.v && t.up && !t.o));
  t = parse_lora_targets("--lora-targets", "all", 8);
  CHECK((t.q && t.k && t.v && t.o && t.gate && t.up && t.down));
  CHECK_THROWS_WITH(parse_lora_targets("--lora-targets", "q,x", 8),
                    Catch::Contains("--lora-targets: \"x\" is not a LoRA target"));
  CHECK_THROWS_WITH(parse_lora_targets("--lora-targets", "", 8), Catch::Contains("names no matrix"));
}

TEST_CASE("lora adapters: peft's counts for Llama-2-7B and GPT-2", "[lora]") {
  LoraTargets qv = parse_lora_targets("t", "q,v", 16);
  const LoraAdapters a = lora_adapters(llama2_7b(), qv);
  CHECK(a.parameters == 8388608);  // peft: "trainable params: 8,388,608" (r=16, q_proj,v_proj)
  CHECK(a.matrices == 64);
  CHECK(lora_target_names(a) == "q_proj,v_proj");
  CHECK(memplan::cli::lora_arithmetic(a) ==
        "LoRA adapters (r=16 on q_proj,v_proj) = 32 attention blocks x (16 x (4096 + 4096) + 16 x (4096 + "
        "4096)) = "
        "8,388,608 trainable parameters");
  // peft, r=8 on every linear layer of Llama-2-7B: 19,988,480 (all params 6,758,404,096).
  CHECK(lora_adapters(llama2_7b(), parse_lora_targets("t", "all", 8)).parameters == 19988480);

  TransformerArch g;
  g.model_type = "gpt2";
  g.layers = 12;
  g.hidden = 768;
  g.heads = 12;
  g.vocab = 50257;
  ModelSpec gpt2;
  gpt2.arch = g;
  // peft, GPT-2 r=8 on c_attn (Conv1D 768 -> 2304): 12 x 8 x (768 + 2304) = 294,912.
  const LoraAdapters c = lora_adapters(gpt2, parse_lora_targets("t", "q,v", 8));
  CHECK(c.parameters == 294912);
  CHECK(lora_target_names(c) == "c_attn (fused q,k,v)");
  CHECK_THROWS_AS(lora_adapters(gpt2, parse_lora_targets("t", "gate", 8)), Error);
  CHECK_THROWS_AS(lora_adapters(ModelSpec{}, qv), Error);
}
