#pragma once
// The tensors llama.cpp's convert_hf_to_gguf.py writes for a decoder-only architecture, before
// llama-quantize: their llama.cpp names (token_embd, blk.N.attn_q, blk.N.ffn_up_exps, ...,
// output), shapes (ne[0] first, as GGUF stores them) and the converter's types (matrices F16,
// vectors and the router F32). The shapes come from the one parameter counter's layout and widths
// (parameter_count.hpp), so their elements add up to count_parameters(arch).total.

#include <memplan/model.hpp>
#include "core/models/gguf.hpp"

namespace memplan {

// The tensor infos of `a` (bytes set, offsets 0). Throws Error naming `what` when `a` lacks what
// the shapes need or is not a decoder-only model.
GgufFile gguf_tensors_of_arch(const TransformerArch& a, const std::string& what);

}  // namespace memplan
