#pragma once
// The one parameter counter: per architecture family, the parameters (and parameter tensors) of
// the embedding, one block, and the final norm and head, computed from a TransformerArch and the
// few layout facts it does not state (ParameterLayout). config.json families, model presets,
// architecture flags, Megatron's tensor-parallel split and ZeRO-3's largest layer all count here.
// Every product and sum is overflow-checked (OverflowError, never a wrapped count).

#include <cstdint>
#include <vector>

#include <memplan/model.hpp>

namespace memplan {

// How a family builds its blocks, beyond the sizes in TransformerArch. layout_of() derives it
// from the architecture; config.json readers set it from their own fields.
struct ParameterLayout {
  bool qkv_bias = false;       // q, k, v projections have biases
  bool out_bias = false;       // the attention output projection has a bias
  bool mlp_bias = false;       // every MLP matrix has a bias
  bool fused_qkv = false;      // q, k, v are one tensor (GPT-2 c_attn, Falcon, GPT-NeoX, Phi-3)
  bool fused_gate_up = false;  // a gated MLP's gate and up are one tensor (Phi-3)
  uint64_t norm_tensors = 2;   // per norm: 2 LayerNorm (weight, bias), 1 RMSNorm, 0 without parameters
  uint64_t norms_per_layer = 2;
  uint64_t position_rows = 0;     // rows of a learned position table (0 = none)
  uint64_t token_types = 0;       // rows of BERT's token-type (segment) table
  bool embedding_norm = false;    // a norm right after the embeddings (BERT)
  uint64_t embedding_width = 0;   // OPT's word_embed_proj_dim when it differs from hidden (0 = hidden)
  bool final_norm = true;         // a norm after the last layer (per stack for encoder-decoders)
  bool pooler = false;            // BERT's pooler: hidden x hidden + bias
  bool head = false;              // an untied output layer, vocab x hidden
  uint64_t relative_buckets = 0;  // T5: a relative position bias (buckets x heads) per stack
  uint64_t qk_norm_width = 0;     // q_norm + k_norm weights per layer (Qwen3, Gemma 3, OLMo 2); 0 = none
  bool head_bias = false;         // the untied output layer has a bias (Phi)
  bool attention_sinks = false;   // one learned sink logit per head and layer (gpt-oss)
  bool router_bias = false;  // one bias per expert on the router (gpt-oss; DeepSeek-V3's score correction)
  bool shared_expert_gate = false;  // Qwen2-MoE: a hidden -> 1 gate on the shared expert
};

// One layer (for an encoder-decoder: one encoder layer, or with cross-attention a decoder layer).
struct LayerParameters {
  uint64_t attention = 0;      // q, k, v and output weight matrices (and cross-attention's)
  uint64_t mlp = 0;            // the MLP's weight matrices, every expert counted
  uint64_t column_biases = 0;  // biases of q, k, v and of the MLP's first matrices
  uint64_t row_biases = 0;     // biases of the attention output and of the MLP's last matrix
  uint64_t norms = 0;
  uint64_t router = 0;  // MoE: hidden x experts (and its biases, a shared expert's gate)
  uint64_t tensors = 0;
  uint64_t total() const;  // overflow-checked sum of the parameters above
};

struct ParameterCount {
  uint64_t embedding = 0;         // word and position tables, token types, embedding norm, projections
  LayerParameters layer;          // one (encoder) layer, every expert
  LayerParameters decoder_layer;  // encoder-decoder only: one decoder layer
  uint64_t final = 0;             // final norm(s), pooler, relative position biases, untied head
  uint64_t total = 0;             // embedding + layers + final
  uint64_t active = 0;            // MoE: parameters used per token (experts_per_token experts); else total
  uint64_t tensors = 0;
  LayerParameters dense_layer;  // MoE models with dense layers: one of those (dense_layers of them)
  uint64_t mtp = 0;             // multi-token-prediction modules (DeepSeek-V3): not in total
  uint64_t mtp_tensors = 0;
};

// The layout of `arch` as its fields say (bias, fused_qkv, norm, norm_first, final_norm,
// position_embedding, tied_embeddings, causal), plus what the family's modelling code adds by
// model_type: bert/roberta token types and pooler, qwen2's q/k/v biases, phi3's fused gate/up,
// opt's two extra position rows, t5's relative position buckets.
ParameterLayout layout_of(const TransformerArch& arch);

// One layer of `arch` built as `layout`, with `experts` experts in its MLP (the architecture's
// for the total, experts_per_token for the active count); cross-attention for a T5 decoder layer.
// `dense_mlp`: a MoE model's dense layer (dense_intermediate or intermediate wide, no router).
LayerParameters count_layer_parameters(const TransformerArch& arch, const ParameterLayout& layout,
                                       uint64_t experts, bool cross_attention = false,
                                       bool dense_mlp = false);

// The whole model. Error when layers, hidden size or heads are 0; OverflowError on overflow.
// Without a vocabulary (vocab 0) there are no embeddings and no head: a stack of layers.
ParameterCount count_parameters(const TransformerArch& arch, const ParameterLayout& layout);
ParameterCount count_parameters(const TransformerArch& arch);  // with layout_of(arch)

// A plain MLP (--mlp 784,512,10): a Linear with bias between each pair of widths. Returns
// {parameters, tensors}; OverflowError when the widths are absurd.
struct MlpParameters {
  uint64_t parameters = 0;
  uint64_t tensors = 0;
};
MlpParameters count_mlp_parameters(const std::vector<uint64_t>& widths);

// The MLP widths count_layer_parameters counts with: a dense model's MLP (intermediate, else 4 x
// hidden), one routed expert's (expert_intermediate, else the dense width) and a MoE model's dense
// layers' (dense_intermediate, else the dense width). Shape lists (a GGUF's tensors) use these too.
uint64_t dense_mlp_width(const TransformerArch& arch);
uint64_t expert_mlp_width(const TransformerArch& arch);
uint64_t dense_layer_mlp_width(const TransformerArch& arch);

// Parameters of one norm of `arch` (LayerNorm: weight and bias; RMSNorm: weight).
uint64_t norm_parameters(const TransformerArch& arch);

// Parameters of the largest single layer that ZeRO-3 / FSDP gathers at once: one block's weight
// matrices (attention and MLP, every expert) or the word embedding, whichever is larger.
uint64_t largest_layer_parameters(const TransformerArch& arch);

}  // namespace memplan
