#pragma once
// What transformers' bitsandbytes conversion leaves unquantised beyond the embeddings and the LM
// head (integrations/bitsandbytes.py replace_with_bnb_linear), for a transformers-family framework
// loading with a BitsAndBytesConfig (nf4, nf4-dq, int8):
//   fused experts  from 5.0 a MoE layer's routed experts are fused 3-D parameters (gate_up_proj
//                  [experts, 2 x width, hidden], down_proj) and the router a plain parameter or an
//                  nn.Linear subclass (MixtralTopKRouter, PhimoeTopKRouter), gpt-oss's expert biases
//                  plain parameters too: only nn.Linear modules
//                  are converted, so both stay 16-bit (bitsandbytes#1849). Shared experts are
//                  nn.Linear and are quantised. unsloth quantises the fused experts itself
//                  (unsloth-zoo#527).
//   Linear subclasses  from 5.5 a module is converted only when `type(module) is nn.Linear` (5.0-5.4:
//                  isinstance): Falcon's layers are FalconLinear, so none of them is quantised.
// torchtune runs its own modules; Lit-GPT its own quantiser: neither is concerned.

#include <cstdint>

#include <memplan/request.hpp>

#include "core/memory/parameter_tensors.hpp"

namespace memplan {

// Whether the conversion leaves this tensor of a decoder layer in the weight format.
bool bnb_leaves(const EstimateRequest& r, const TensorShape& t);

// The routed experts' and routers' elements left in the weight format (0: none).
uint64_t bnb_unconverted_experts(const EstimateRequest& r);

// Every decoder layer is left in the weight format (Falcon from transformers 5.5).
bool bnb_unconverted_layers(const EstimateRequest& r);

}  // namespace memplan
