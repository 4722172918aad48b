// Today's dense decoder families against published parameter counts. Configs are real files
// (tests/data/hf_configs/SOURCES.md); every expected count is a published integer with its source.
#include <catch2/catch.hpp>

#include <string>

#include <memplan/error.hpp>
#include "core/models/hf_config.hpp"

using namespace memplan;

namespace {

const std::string k_dense_dir = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/";

struct PublishedDense {
  const char* file;
  uint64_t parameters;
  const char* source;
};

}  // namespace

TEST_CASE("dense families: config.json counts equal the published counts", "[hf_config][families]") {
  // "keras-hub": the "params" field of keras-team/keras-hub presets @71453d0.
  // "Hub": the Hugging Face model API's safetensors parameter total.
  static const PublishedDense table[] = {
      {"Qwen3-0.6B.json", 596049920, "keras-hub qwen3_0.6b_en"},
      {"Qwen3-1.7B.json", 1720574976, "keras-hub qwen3_1.7b_en"},
      {"gemma-2-2b.json", 2614341888, "keras-hub gemma2_2b_en"},
      {"gemma-2-27b.json", 27227128320, "keras-hub gemma2_27b_en"},
      {"gemma-3-1b-it.json", 999885952, "keras-hub gemma3_instruct_1b"},
      {"phi-1_5.json", 1418270720, "Hub safetensors_total_params of microsoft/phi-1_5"},
      {"phi-2.json", 2779683840, "Hub safetensors parameters {F16: 2779683840} of microsoft/phi-2"},
      {"aya-23-8B.json", 8028033024,
       "cohereforai/aya-expanse-8b (same dimensions), a GitHub model_sizes table"},
      {"OLMo-2-1124-7B.json", 7298617344, "Hub safetensors.total of allenai/OLMo-2-1124-7B"},
      {"OLMo-2-1124-13B.json", 13716198400, "Hub safetensors.total of allenai/OLMo-2-1124-13B"},
  };
  for (const PublishedDense& p : table) {
    INFO(p.file << " (" << p.source << ")");
    HfConfig c = read_hf_config_detail(k_dense_dir + p.file);
    CHECK(c.model.parameters == p.parameters);
    CHECK(c.family.find("generic") == std::string::npos);
  }
}

TEST_CASE("Mistral-Nemo: head_dim 128 is not hidden 5120 / 32 heads", "[hf_config][families]") {
  // Mistral-Nemo's text dimensions as transformers' LlavaConfig test writes Pixtral-12B's text_config
  // (tests/models/llava/test_configuration.py); Mistral-Nemo-Instruct-2407 has 12,247,782,400
  // parameters (GitHub tables of model sizes; llama.cpp n_params of its GGUF).
  const std::string nemo = R"({"model_type": "mistral", "hidden_size": 5120, "head_dim": 128,
      "num_attention_heads": 32, "intermediate_size": 14336, "max_position_embeddings": 1024000,
      "num_hidden_layers": 40, "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 1000000000.0,
      "sliding_window": null, "vocab_size": 131072})";
  HfConfig c = parse_hf_config_detail(nemo, "config.json");
  CHECK(c.model.parameters == 12247782400ull);
  CHECK(c.model.arch->head_dim == 128);
}

TEST_CASE("GLM-4-0414: fused gate_up, q/k/v biases, four norms per layer", "[hf_config][families]") {
  // GLM-4-9B-0414's dimensions (hidden 4096, 40 layers, 32 heads, 2 kv heads, head_dim 128,
  // intermediate 13696, vocab 151552, attention_bias true, untied): llama.cpp reports
  // n_params 9,400,279,040 for the same text decoder (GLM-4.6V-Flash GGUF, a public model list).
  const std::string glm =
      R"({"architectures": ["Glm4ForCausalLM"], "model_type": "glm4", "attention_bias": true,
      "head_dim": 128, "hidden_size": 4096, "intermediate_size": 13696, "num_attention_heads": 32,
      "num_hidden_layers": 40, "num_key_value_heads": 2, "partial_rotary_factor": 0.5,
      "tie_word_embeddings": false, "vocab_size": 151552})";
  HfConfig c = parse_hf_config_detail(glm, "config.json");
  CHECK(c.model.parameters == 9400279040ull);
}

TEST_CASE("starcoder2 and phi: biases everywhere, by hand", "[hf_config][families]") {
  // starcoder2-7b (hidden 4608, 32 layers, 36 heads, 4 kv heads, intermediate 18432, vocab 49152,
  // use_bias, LayerNorm with bias, tied): no published integer found, so by hand from
  // Starcoder2's modules: embed 49152 x 4608 = 226,492,416; per layer q 4608^2 + 4608, k and v
  // 4608 x 512 + 512 each, o 4608^2 + 4608, c_fc 4608 x 18432 + 18432, c_proj 18432 x 4608 + 4608,
  // two LayerNorms 4 x 4608 = 217,106,944; final LayerNorm 9,216.
  HfConfig s = read_hf_config_detail(k_dense_dir + "starcoder2-7b.json");
  CHECK(s.model.parameters == 226492416ull + 32ull * 217106944 + 9216);
  // phi: one LayerNorm per layer, the lm_head carries a bias of vocab size.
  HfConfig p = read_hf_config_detail(k_dense_dir + "phi-2.json");
  CHECK(p.model.arch->parallel_attention);
}
