#pragma once
// llama.cpp's file types by name (q4_k_m, q8_0, iq4_xs, ...) and the rule llama-quantize uses
// to pick each tensor's ggml type inside one (llama_tensor_get_type in src/llama-quant.cpp):
// the _S/_M/_L mixes give attn_v, ffn_down and the output matrix more bits than the rest.
// Types are named as ggml names them ("Q6_K"); their block sizes live with the GGUF reader.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <memplan/storage_format.hpp>

namespace memplan {

// One llama.cpp file type (enum llama_ftype in include/llama.h).
struct LlamaFtype {
  uint32_t id;               // LLAMA_FTYPE_MOSTLY_Q4_K_M = 15, as general.file_type stores it
  const char* name;          // "q4_k_m", the name llama-quantize takes (lower case)
  const char* default_type;  // the ggml type of most matrices ("Q4_K")
  const char* description;   // one line
};

const std::vector<LlamaFtype>& llama_ftypes();

// By name, case-insensitive ("Q4_K_M" and "q4_k_m"), or nullptr.
const LlamaFtype* find_llama_ftype(std::string_view name);

// By id, or nullptr.
const LlamaFtype* llama_ftype(uint32_t id);

// What llama-quantize looks at for one tensor.
enum class TensorRole {
  token_embd,
  output,
  attn_q,
  attn_k,
  attn_v,
  attn_qkv,
  attn_output,
  ffn_up,
  ffn_gate,
  ffn_down,
  other
};

struct QuantModelFacts {
  uint64_t layers = 0;           // n_layer
  uint64_t gqa = 1;              // n_head / n_head_kv
  uint64_t experts = 0;          // n_expert (0 or 1: dense)
  bool falcon = false;           // LLM_ARCH_FALCON
  bool size_70b = false;         // llama.cpp's LLM_TYPE_70B (a llama with 80 layers)
  bool tied_embeddings = false;  // no output.weight: token_embd gets the output's type
  bool imatrix = false;          // quantised with an importance matrix
};

// The ggml type llama-quantize gives a quantisable tensor of `role` in layer `layer` (the
// index among the tensors of that role, which is the layer for one tensor per layer), before
// the fallback for rows that do not fill a block.
std::string llama_tensor_type(const LlamaFtype& f, const QuantModelFacts& m, TensorRole role, uint64_t layer);

// A weight format for quantisation: a storage format by name, or Error naming `subject` that
// lists the storage formats and the llama.cpp file types (with "did you mean").
const StorageFormat& find_quantize_format(std::string_view subject, std::string_view name);

// Its fallback when a row of `ncols` is not a whole number of blocks (tensor_type_fallback).
std::string llama_fallback_type(const std::string& type);

}  // namespace memplan
