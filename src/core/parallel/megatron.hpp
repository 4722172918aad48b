#pragma once
// Megatron-LM's split of a transformer over tensor and pipeline ranks: parameters per stage and
// activation memory per layer (Korthikanti et al. 2022, "Reducing Activation Recomputation in
// Large Transformer Models", Table 2, Sec. 4.2.3 for pipelines). Used by estimate_sharded.

#include <cstdint>
#include <string>
#include <vector>

#include <memplan/model.hpp>
#include <memplan/sharding.hpp>

namespace memplan {

// Saved activations of one transformer layer for one micro-batch on one tensor-parallel rank.
// For GPT-3 shapes with 2-byte activations and dropout: sbh(34 + 5as/h) at tp = 1;
// sbh(10 + 24/t + 5as/(ht)) with tp; sbh(34/t + 5as/(ht)) with sequence parallel; selective
// recompute drops the 5as/h term; full recompute keeps the layer input, 2sbh (/t with sequence parallel).
struct LayerActivation {
  uint64_t replicated = 0;  // layer-norm inputs, QKV/fc1 inputs, dropout masks: the "10" (/t with SP)
  uint64_t split = 0;       // Q, K, V, projection and MLP inputs: the "24", already divided by t
  uint64_t scores = 0;      // the s x s attention terms: the "5as/h", already divided by t
  uint64_t total = 0;       // what the layer keeps under the chosen recompute
};

LayerActivation korthikanti_layer_activation(const TransformerArch& arch, const TransformerStep& step,
                                             uint64_t tp, bool sequence_parallel, Checkpointing recompute);

// Micro-batches (of one model chunk) in flight on pipeline rank `stage` under 1F1B: pp - stage
// without interleaving; with v virtual stages, Megatron's warm-up count 2(pp - stage - 1) + (v-1)pp + 1
// chunk micro-batches. Capped by the micro-batches of the step (0 = uncapped).
uint64_t pipeline_in_flight(uint64_t pp, uint64_t stage, uint64_t virtual_stages, uint64_t micro_batches);

// Parameters of one transformer layer held by one tensor-parallel rank.
uint64_t megatron_layer_parameters(const TransformerArch& arch, const TransformerStep& step, uint64_t tp);

// Vocabulary padded as Megatron does: a multiple of vocab_multiple x tp.
uint64_t megatron_padded_vocab(uint64_t vocab, uint64_t vocab_multiple, uint64_t tp);

// Parameters held by one tensor-parallel rank of each pipeline stage: layers / pp each, the
// embedding (and learned positions) on the first stage, final norm and output layer on the last
// (a copy of tied embeddings when pp > 1, as Megatron keeps one for the tied gradient).
std::vector<uint64_t> megatron_stage_parameters(const TransformerArch& arch, const TransformerStep& step,
                                                uint64_t tp, uint64_t pp);

// Activation bytes of pipeline rank `stage` (one tensor-parallel rank): layers in flight x per
// layer, plus the embedding dropout mask on the first stage and the output layer (final norm and
// projection inputs, fp32 logits: 4sbh/t (1 + v/h) in the paper) on the last.
uint64_t megatron_stage_activation_bytes(const TransformerArch& arch, const TransformerStep& step,
                                         const ParallelLayout& layout, uint64_t stage);

}  // namespace memplan
