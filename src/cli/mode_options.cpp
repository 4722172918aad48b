// Flags of the other mode are refused (mode_options.hpp).
#include "cli/mode_options.hpp"

#include <memplan/error.hpp>

namespace memplan::cli {

void refuse_other_mode_flags(const PlanValues& v, const EstimateRequest& r) {
  if (r.mode == Mode::infer) {
    const auto training_only = [](Field f, const std::string& what) {
      throw Error(f,
                  what + " applies to training (--mode train): inference keeps nothing for a backward pass");
    };
    if (v.checkpointing && *v.checkpointing != Checkpointing::none)
      training_only(Field::checkpointing, "\"" + std::string(to_string(*v.checkpointing)) + "\"");
    if (v.grad_accum && *v.grad_accum != 1) training_only(Field::grad_accum, "gradient accumulation");
    if (v.loss && *v.loss != Loss::plain) training_only(Field::loss, "the loss kernel");
    if (v.optimizer_loop) training_only(Field::optimizer_loop, "the optimizer's loop");
    if (v.lora_dropout) training_only(Field::lora_dropout, "LoRA dropout");
    return;
  }
  if (v.kv_format)
    throw Error(Field::kv_format, "applies to inference (--mode infer): a training step keeps no KV cache");
  if (v.all_logits && *v.all_logits)
    throw Error(Field::logits,
                "applies to inference (--mode infer): a training step's logits follow its loss (--loss)");
  if (v.prefill_chunk && *v.prefill_chunk != k_default_prefill_chunk)
    throw Error(Field::prefill_chunk,
                "applies to inference (--mode infer): the chunk of a prompt prefilled at once");
}

}  // namespace memplan::cli
