// Activations of an encoder's head (bert, roberta) and its loss: what lies after the last layer
// when the model is trained as ...ForMaskedLM or ...ForSequenceClassification
// (TransformerArch::encoder_head, from config.json's architectures). Measured with
// saved_tensors_hooks on transformers 5.24.0 / torch 2.15 on CPU (bench/frameworks/measure_saved.py).

#include "core/base/checked.hpp"
#include "core/memory/activation_ledger.hpp"
#include "core/memory/transformer_layer_model.hpp"

namespace memplan {
namespace detail {

void LayerModel::encoder_head(Entries& e) const {
  const Shape& d = m_shape;
  const bool lora = m_opts.lora.has_value();  // the head is frozen: its Linears keep no input
  const bool cuda_autocast = m_opts.autocast && m_opts.runtime == Runtime::cuda;
  if (m_arch.encoder_head == "mlm") {
    // BertLMPredictionHead / RobertaLMHead (transformers 5.24.0 models/bert/modeling_bert.py,
    // models/roberta/modeling_roberta.py): dense -> activation -> LayerNorm -> decoder over the
    // vocabulary. The last layer's output is new (no later layer keeps it); the activation keeps
    // its input, LayerNorm its input and mean/rstd, the decoder its input. BertForMaskedLM.forward
    // calls CrossEntropyLoss on the scores as they are: no fp32 upcast (loss_format()).
    if (!lora) linear_inputs(e, "last layer output (MLM head dense input)", 1);
    add_entry(e, "MLM head dense output (activation input)", {d.s, d.h}, m_act);
    if (cuda_autocast) {  // CUDA autocast runs layer_norm in fp32: a copy of its input, an fp32 output
      add_entry(e, "MLM head activation output cast to fp32 (LayerNorm input)", {d.s, d.h},
                detail::fp32_fmt());
      add_entry(e, "MLM head LayerNorm mean and rstd", {d.s, 2}, detail::fp32_fmt());
      if (!lora)
        add_entry(
            e, [&] { return "MLM head LayerNorm output cast to " + m_act.name + " (decoder input)"; },
            {d.s, d.h}, m_act);
    } else {
      add_entry(e, "MLM head activation output (LayerNorm input)", {d.s, d.h}, m_act);
      add_entry(e, "MLM head LayerNorm mean and rstd", {d.s, 2}, detail::fp32_fmt());
      if (!lora) add_entry(e, "MLM head LayerNorm output (decoder input)", {d.s, d.h}, m_act);
    }
    add_entry(e, "logits (MLM head output, held for the loss)", {d.s, d.vocab}, m_act, Role::held);
    cross_entropy(e, {d.s, d.vocab}, false);
    return;
  }
  if (m_arch.encoder_head != "classification") return;
  // BertPooler + classifier (BertForSequenceClassification) and RobertaClassificationHead
  // (transformers 5.24.0): the first token's hidden state -> dense -> tanh -> Linear to the labels.
  // The dense keeps its input, a view of the last layer's output, so that whole storage stays;
  // under autocast it keeps the half copy of the first token instead. tanh keeps its output (the
  // classifier's input). Under LoRA peft's SEQ_CLS task trains `classifier` (modules_to_save):
  // for RoBERTa that is the whole head, dense included; BERT's pooler stays frozen.
  const bool dense_trains = !lora || m_arch.model_type == "roberta";
  if (dense_trains) {
    if (m_opts.autocast)
      add_entry(
          e, [&] { return "first token cast to " + m_act.name + " (classification head dense input)"; },
          {1, d.h}, m_act);
    else
      add_entry(e, "last layer output (the head's first-token view keeps all of it)", {d.s, d.h}, m_res);
  }
  add_entry(e, "tanh output (classifier input)", {1, d.h}, m_act);
  const uint64_t labels = m_arch.labels ? m_arch.labels : 2;
  add_entry(e, "logits (classifier output, held for the loss)", {labels}, m_act, Role::held);
  cross_entropy(e, {labels}, false);
}

// The weights after the last layer that autocast casts and keeps: the causal LM head (vocab x h);
// an MLM head's dense (h x h) and decoder (vocab x h); a classification head's dense and classifier
// (labels x h). Frozen or not, each one's input needs a gradient (or its weight does), so the
// half copy stays for backward.
uint64_t LayerModel::head_weight_elements() const {
  const Shape& d = m_shape;
  if (d.vocab == 0) return 0;
  if (m_arch.causal) return checked_mul(d.vocab, d.h, "weights");
  const uint64_t dense = checked_mul(d.h, d.h, "weights");
  if (m_arch.encoder_head == "mlm")
    return checked_add(dense, checked_mul(d.vocab, d.h, "weights"), "weights");
  if (m_arch.encoder_head == "classification")
    return checked_add(dense, checked_mul(m_arch.labels ? m_arch.labels : 2, d.h, "weights"), "weights");
  return 0;
}

}  // namespace detail
}  // namespace memplan
