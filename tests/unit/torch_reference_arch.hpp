#pragma once
// The architecture of a PyTorch-measured reference model (tests/data/torch_cpu_*.json, "arch"),
// as memplan's TransformerArch. Fields the JSON leaves out take the measured scripts' defaults.

#include <string>

#include <nlohmann/json.hpp>

#include <memplan/model.hpp>

namespace memplan::test {

inline TransformerArch arch_from(const nlohmann::json& a) {
  TransformerArch t;
  t.layers = a.at("layers");
  t.hidden = a.at("hidden");
  t.heads = a.at("heads");
  t.kv_heads = a.value("kv_heads", uint64_t{0});
  t.intermediate = a.value("intermediate", uint64_t{0});
  t.vocab = a.value("vocab", uint64_t{0});
  t.max_positions = a.value("max_positions", uint64_t{0});
  t.activation = a.value("activation", std::string("gelu"));
  t.gated_mlp = a.value("gated_mlp", false);
  t.norm = a.value("norm", std::string("layernorm"));
  t.norm_first = a.value("norm_first", true);
  t.parallel_attention = a.value("parallel_attention", false);
  t.fused_qkv = a.value("fused_qkv", false);
  t.ffn_dropout = a.value("ffn_dropout", false);
  t.final_norm = a.value("final_norm", true);
  t.bias = a.value("bias", false);
  t.position_embedding = a.value("position_embedding", std::string("none"));
  t.tied_embeddings = a.value("tied_embeddings", false);
  t.causal = a.value("causal", true);
  t.hidden_dropout = a.value("hidden_dropout", 0.0);
  t.attention_dropout = a.value("attention_dropout", 0.0);
  return t;
}

}  // namespace memplan::test
