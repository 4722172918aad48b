#pragma once
// A config.json's quantization_config: which linear layers a quantised checkpoint stores packed,
// in which tensors, and so the exact bytes of its weights (what model.safetensors.index.json
// calls total_size). Methods: gptq, awq (GEMM), bitsandbytes 4-bit / 8-bit, fp8 (per tensor or
// with weight_block_size), mxfp4, compressed-tensors (pack-quantized, float-quantized).
// The tensor shapes are those the quantisers save (cited per method in the .cpp); every other
// parameter (embeddings, norms, biases, routers, what a method skips) is stored in torch_dtype.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memplan/model.hpp>
#include <memplan/storage_format.hpp>
#include "core/models/parameter_count.hpp"

namespace memplan::detail {

// `count` weight matrices of out x in (nn.Linear(in, out)), named as in the checkpoint below
// model.layers.N ("self_attn.q_proj", "mlp.experts.down_proj") or at the top ("lm_head").
struct LinearGroup {
  std::string name;
  uint64_t in = 0;
  uint64_t out = 0;
  uint64_t count = 0;
  // The layers holding the group: `count` is spread evenly over `layers` of them (0 = not in
  // model.layers, as lm_head). `placed`: they are layers 0 .. layers-1; otherwise they are some of
  // the `span` layers (dense and MoE layers mixed) and per-layer module lists cannot be resolved.
  uint64_t layers = 0;
  bool placed = true;
  uint64_t span = 0;
};

// The linear layers of a decoder built as `layout`: q/k/v (or fused qkv) and o per layer, the
// MLP's matrices per layer and expert, and an untied lm_head. Their parameters plus the rest
// (embeddings, norms, biases, routers) make up count_parameters(arch, layout).total.
std::vector<LinearGroup> linear_groups(const TransformerArch& arch, const ParameterLayout& layout);

// A quantised checkpoint's weights.
struct QuantizedWeights {
  std::string method;  // quant_method as the config names it
  std::string format;  // storage format of the packed weights: int4, int8, nf4, fp8-e4m3, mxfp4
  uint64_t bytes = 0;  // every tensor the checkpoint stores
  uint64_t quantized_parameters = 0;  // weights stored packed
  uint64_t packed_bytes = 0;          // their bytes: packed codes plus scales, zeros and indices
  uint64_t other_bytes = 0;           // the other parameters, in `other_format`
  std::string other_format;           // torch_dtype's storage format (fp16 when absent)
  std::vector<std::string> notes;     // what was counted, per method; what was assumed
};

// Reads config["quantization_config"] (nullopt when absent). `total_parameters` is the logical
// count of the model described by `groups`; `torch_format` the storage format of torch_dtype ("" =
// absent). Error "<file>: quantization_config.<key>: ..." for a method or value memplan cannot
// count exactly.
std::optional<QuantizedWeights> read_quantization_config(const nlohmann::json& config,
                                                         const std::string& file,
                                                         const std::vector<LinearGroup>& groups,
                                                         uint64_t total_parameters,
                                                         const std::string& torch_format);

}  // namespace memplan::detail
