#pragma once
// A GGUF file as llama.cpp would write it for an architecture known from a preset or a
// config.json, quantised as llama-quantize does for a file type (q4_k_m, q8_0, ...): the tensors
// with their llama.cpp names, shapes and ggml types, so the weight bytes, and the bytes of each
// layer, are those of the real file's tensor data.

#include <memplan/model.hpp>
#include <memplan/request.hpp>
#include "core/formats/llama_quant.hpp"
#include "core/models/gguf.hpp"

namespace memplan {

// The tensor infos (no header, no data) of `a` in llama.cpp's naming (token_embd, blk.N.attn_q,
// ..., output), typed by `f`. Throws Error when `a` lacks what the shapes need.
GgufFile gguf_of_arch(const TransformerArch& a, const LlamaFtype& f, bool imatrix = false);

// The layer of a tensor named blk.N.*, or -1 (token_embd, output, output_norm).
int64_t gguf_tensor_layer(const std::string& name);

// The role llama-quantize gives a tensor name.
TensorRole gguf_tensor_role(const std::string& name);

// Plans `r` with the weights of llama.cpp file type `id`: the bytes of the tensors llama-quantize
// writes (model.weight_bytes, counted as stored). Inference only; needs the architecture.
void use_llama_ftype(EstimateRequest& r, uint32_t id);

}  // namespace memplan
