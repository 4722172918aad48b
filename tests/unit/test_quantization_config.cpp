// quantization_config: the bytes of a quantised checkpoint against published totals
// (model.safetensors.index.json total_size) and tensor sizes published by others.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include "core/formats/hardware_support.hpp"
#include "core/models/hf_config.hpp"
#include "core/models/quantization_config.hpp"

using namespace memplan;
using namespace memplan::detail;

namespace {

const std::string k_quant_dir = std::string(MEMPLAN_TEST_DATA_DIR) + "/hf_configs/";

nlohmann::json load(const std::string& name) {
  std::ifstream f(k_quant_dir + name);
  std::stringstream s;
  s << f.rdbuf();
  return nlohmann::json::parse(s.str());
}

// One linear layer, and nothing else, quantised as `q`.
QuantizedWeights one_linear(const std::string& q, uint64_t in, uint64_t out) {
  nlohmann::json j;
  j["quantization_config"] = nlohmann::json::parse(q);
  auto w = read_quantization_config(j, "config.json", {{"mlp.down_proj", in, out, 1}}, in * out, "fp16");
  REQUIRE(w);
  return *w;
}

std::string quant_config_error(const std::string& q) {
  try {
    one_linear(q, 4096, 4096);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("gpt-oss-20b: mxfp4 experts plus bf16 rest = the checkpoint's total_size", "[quantization]") {
  // openai/gpt-oss-20b: model.safetensors.index.json metadata.total_size = 13,761,264,768 bytes;
  // 20,914,757,184 parameters (keras-hub gpt_oss_20b_en). Its experts are stored as
  // gate_up_proj_blocks [32, 5760, 90, 16] + _scales [32, 5760, 90] and down_proj_blocks
  // [32, 2880, 90, 16] + _scales [32, 2880, 90] per layer (24 layers).
  const nlohmann::json config = load("gpt-oss-20b.json");
  TransformerArch a;
  a.layers = 24;
  a.hidden = 2880;
  a.heads = 64;
  a.kv_heads = 8;
  a.head_dim = 64;
  a.intermediate = 2880;
  a.vocab = 201088;
  a.gated_mlp = true;
  a.experts = 32;
  ParameterLayout l;
  l.fused_gate_up = true;
  l.head = true;
  auto w = read_quantization_config(config, "gpt-oss-20b.json", linear_groups(a, l), 20914757184ull, "bf16");
  REQUIRE(w);
  CHECK(w->method == "mxfp4");
  CHECK(w->format == "mxfp4");
  CHECK(w->quantized_parameters == 24ull * 32 * (5760 + 2880) * 2880);
  CHECK(w->bytes == 13761264768ull);
}

TEST_CASE("AWQ GEMM: qweight, qzeros and scales of one layer", "[quantization]") {
  // A 512 x 512 layer in group size 128, as a public safetensors fixture lays it out:
  // qweight I32 [512, 64] at 0..131072, qzeros I32 [4, 64] to 132096, scales F16 [4, 512] to 136192.
  QuantizedWeights w = one_linear(
      R"({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true, "version": "gemm"})", 512,
      512);
  CHECK(w.bytes == 136192);
  CHECK(w.format == "int4");
}

TEST_CASE("GPTQ: AutoGPTQ's four buffers per layer", "[quantization]") {
  // QuantLinear(bits=4, group_size=128, in=4096, out=4096): qweight int32 [512, 4096] = 8,388,608 B,
  // qzeros int32 [32, 512] = 65,536 B, scales fp16 [32, 4096] = 262,144 B, g_idx int32 [4096] = 16,384 B.
  QuantizedWeights w =
      one_linear(R"({"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": false})", 4096, 4096);
  CHECK(w.bytes == 8388608 + 65536 + 262144 + 16384);
  // group_size -1: one group per column.
  QuantizedWeights one =
      one_linear(R"({"quant_method": "gptq", "bits": 8, "group_size": -1, "desc_act": true})", 4096, 4096);
  CHECK(one.bytes == 4096ull * 4096 + 4 * 1024 + 2 * 4096 + 4 * 4096);
  CHECK(one.format == "int8");
}

TEST_CASE("fp8 block scales: one fp32 per 128 x 128 tile", "[quantization]") {
  // DeepSeek-V3 / Qwen3-FP8: weight [out, in] in fp8, weight_scale_inv [ceil(out/128), ceil(in/128)].
  // 4096 x 14336 (a Llama-3-8B up_proj): 58,720,256 B + 32 x 112 x 4 B.
  QuantizedWeights w = one_linear(R"({"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
      "weight_block_size": [128, 128]})",
                                  4096, 14336);
  CHECK(w.bytes == 4096ull * 14336 + 32 * 112 * 4);
  CHECK(w.format == "fp8-e4m3");
}

TEST_CASE("bitsandbytes: what is packed and what stays 16-bit", "[quantization]") {
  // 8-bit: int8 weight + fp32 SCB per output row + one weight_format byte.
  QuantizedWeights w8 = one_linear(R"({"quant_method": "bitsandbytes", "load_in_8bit": true})", 4096, 4096);
  CHECK(w8.bytes == 4096ull * 4096 + 4 * 4096 + 1);
  // 4-bit nf4 with double quantisation: 4 bits + 1 byte per 64 + fp32 per 256 blocks + the two maps.
  QuantizedWeights w4 = one_linear(R"({"quant_method": "bitsandbytes", "load_in_4bit": true,
      "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": true})",
                                   4096, 4096);
  // ... and the packed quant_state text, 152 bytes without its nested_offset digits:
  // {"quant_type": "nf4", "blocksize": 64, "dtype": "float16", "shape": [4096, 4096],
  //  "nested_blocksize": 256, "nested_dtype": "float32", "nested_offset": }
  CHECK(w4.bytes == 4096ull * 4096 / 2 + 262144 + 1024 * 4 + 1024 + 64 + 152);
  CHECK(w4.format == "nf4-dq");

  // lm_head stays 16-bit by default; llm_int8_skip_modules replaces that default.
  nlohmann::json j;
  j["quantization_config"] = {{"quant_method", "bitsandbytes"}, {"load_in_8bit", true}};
  const std::vector<LinearGroup> g = {{"mlp.down_proj", 64, 64, 1}, {"lm_head", 64, 100, 1}};
  auto d = read_quantization_config(j, "c", g, 64 * 64 + 64 * 100, "bf16");
  CHECK(d->quantized_parameters == 64 * 64);
  j["quantization_config"]["llm_int8_skip_modules"] = {"down_proj"};
  auto s = read_quantization_config(j, "c", g, 64 * 64 + 64 * 100, "bf16");
  CHECK(s->quantized_parameters == 64 * 100);
}

TEST_CASE("quantization_config that memplan cannot count is refused by name", "[quantization]") {
  CHECK(
      quant_config_error(R"({"quant_method": "hqq"})") ==
      "config.json: quantization_config.quant_method: \"hqq\" is not a method memplan counts (expected gptq, "
      "awq, bitsandbytes, fp8, mxfp4 or compressed-tensors)");
  CHECK(quant_config_error(R"({"quant_method": "awq", "version": "gemv"})") ==
        "config.json: quantization_config.version: \"gemv\" is not a layout memplan counts (expected gemm)");
  CHECK(quant_config_error(R"({"quant_method": "gptq", "bits": 5})") ==
        "config.json: quantization_config.bits: 5 bits is not one memplan counts (expected 2, 3, 4, 8)");
}

TEST_CASE("a GPTQ config.json sets the stored weight bytes", "[quantization]") {
  // gpt2 in GPTQ 4-bit, group 128, by hand from AutoGPTQ's buffer shapes: per layer
  //   c_attn 768->2304: qweight 884,736 + qzeros 6x288x4 = 6,912 + scales 6x2304x2 = 27,648 + g_idx 3,072
  //   attn.c_proj 768->768: 294,912 + 2,304 + 9,216 + 3,072;  c_fc 768->3072: 1,179,648 + 9,216 + 36,864 +
  //   3,072 mlp.c_proj 3072->768 (24 groups): 1,179,648 + 9,216 + 36,864 + 12,288   -> 3,698,688 B x 12
  //   layers
  // plus the other 124,439,808 - 12 x 7,077,888 = 39,505,152 parameters in fp16 (lm_head is tied to wte).
  ModelSpec m = read_hf_config(k_quant_dir + "gpt2-gptq-4bit.json");
  CHECK(m.weight_format == "int4");
  CHECK(m.weight_bytes == 12ull * 3698688 + 2ull * 39505152);
}

TEST_CASE("fp8 per tensor: a static activation scheme adds one input_scale per layer", "[quantization]") {
  // AutoFP8 (neuralmagic/AutoFP8 auto_fp8/quantize.py): FP8DynamicLinear keeps weight (fp8) and
  // weight_scale, a 0-d fp32 tensor from per_tensor_quantize; FP8StaticLinear adds input_scale, also
  // a 0-d fp32 tensor. One 4096 x 4096 layer: 16,777,216 B + 4 B, plus 4 B when static.
  QuantizedWeights dynamic =
      one_linear(R"({"quant_method": "fp8", "activation_scheme": "dynamic"})", 4096, 4096);
  CHECK(dynamic.bytes == 4096ull * 4096 + 4);
  QuantizedWeights fixed = one_linear(
      R"({"quant_method": "fp8", "activation_scheme": "static", "ignored_layers": ["lm_head"]})", 4096, 4096);
  CHECK(fixed.bytes == 4096ull * 4096 + 4 + 4);
  // ignored_layers (AutoFP8's key) keeps a layer in torch_dtype like modules_to_not_convert.
  nlohmann::json j;
  j["quantization_config"] = {{"quant_method", "fp8"}, {"ignored_layers", {"down_proj"}}};
  auto w = read_quantization_config(j, "c", {{"mlp.down_proj", 64, 64, 1}}, 64 * 64, "bf16");
  CHECK(w->quantized_parameters == 0);
  CHECK(quant_config_error(R"({"quant_method": "fp8", "activation_scheme": "per-token"})") ==
        "config.json: quantization_config.activation_scheme: \"per-token\" is not dynamic or static");
}

TEST_CASE("compressed-tensors: activation ordering and static input scales", "[quantization]") {
  // compressed-tensors quantization/lifecycle/initialize.py (_initialize_scale_zero_point): a group
  // scheme with actorder "group" registers weight_g_idx int32 [in]; static input activations register
  // input_scale of shape (1,) in the layer's dtype. One 4096 x 4096 layer in fp16:
  // W4A16 group 128: weight_packed int32 [4096, 512] = 8,388,608 B, weight_scale [4096, 32] x 2 B =
  // 262,144 B, weight_shape int64 [2] = 16 B, weight_g_idx 4096 x 4 B = 16,384 B.
  QuantizedWeights w4 = one_linear(R"({"quant_method": "compressed-tensors", "format": "pack-quantized",
      "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": null, "weights": {
      "num_bits": 4, "type": "int", "symmetric": true, "strategy": "group", "group_size": 128,
      "actorder": "group", "dynamic": false}}}})",
                                   4096, 4096);
  CHECK(w4.bytes == 8388608ull + 262144 + 16 + 16384);
  // FP8 W8A8 with static per-tensor activations: weight 16,777,216 B, weight_scale [4096, 1] x 2 B,
  // input_scale [1] x 2 B.
  QuantizedWeights f8 = one_linear(R"({"quant_method": "compressed-tensors", "format": "float-quantized",
      "config_groups": {"group_0": {"targets": ["Linear"],
      "input_activations": {"num_bits": 8, "type": "float", "symmetric": true, "strategy": "tensor", "dynamic": false},
      "weights": {"num_bits": 8, "type": "float", "symmetric": true, "strategy": "channel", "dynamic": false}}}})",
                                   4096, 4096);
  CHECK(f8.bytes == 4096ull * 4096 + 4096 * 2 + 2);
  // Dynamic per-token activations store nothing.
  QuantizedWeights dyn = one_linear(R"({"quant_method": "compressed-tensors", "format": "float-quantized",
      "config_groups": {"group_0": {"targets": ["Linear"],
      "input_activations": {"num_bits": 8, "type": "float", "strategy": "token", "dynamic": true},
      "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}})",
                                    4096, 4096);
  CHECK(dyn.bytes == 4096ull * 4096 + 4096 * 2);
  // The format named in the group when the top level says "mixed-precision".
  QuantizedWeights mixed = one_linear(R"({"quant_method": "compressed-tensors", "format": "mixed-precision",
      "config_groups": {"group_0": {"targets": ["Linear"], "format": "float-quantized",
      "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}})",
                                      4096, 4096);
  CHECK(mixed.bytes == dyn.bytes);
}

TEST_CASE("the flat gptq-4bit / awq-4bit / mxfp4 formats are weight-only on any card", "[quantization]") {
  // --quantize gptq-4bit was refused by the hardware check ("not a format or precision recipe")
  // although the storage-format table and --help list it.
  for (const char* f : {"gptq-4bit", "awq-4bit", "mxfp4"}) {
    INFO(f);
    const HardwareSupport hs = hardware_support("precision", f, std::string_view("7.5"));
    CHECK(hs.native);
    CHECK(hs.family == FormatFamily::weight_only);
  }
}
