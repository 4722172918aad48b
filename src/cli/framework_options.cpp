#include "cli/framework_options.hpp"

#include <fmt/format.h>

#include <memplan/error.hpp>
#include <memplan/framework_profile.hpp>
#include <memplan/lora.hpp>

namespace memplan::cli {
namespace {

std::string note(const FrameworkProfile& p, const std::string& rule, std::string_view source, Field flag) {
  return flag_for(Field::framework) + " " + to_string(p.framework) + ": " + rule + " (" +
         std::string(source) + "; " + flag_for(flag) + " to change)";
}

const char* loop_name(OptimizerLoop l) {
  switch (l) {
    case OptimizerLoop::foreach:
      return "foreach";
    case OptimizerLoop::per_tensor:
      return "per-tensor";
    case OptimizerLoop::fused:
      return "fused";
    case OptimizerLoop::device_default:
      break;
  }
  return "foreach";
}

}  // namespace

PlanValues with_profile(const PlanValues& v, const std::map<std::string, std::string>& given,
                        const ModelSpec& model, std::vector<std::string>& notes) {
  PlanValues out = v;
  const FrameworkProfile& p = framework_profile(v.framework.value_or(Framework::hf));
  const bool train = v.mode.value_or(Mode::train) == Mode::train;
  const bool causal = model.arch && model.arch->causal && model.arch->vocab > 0;
  // The training frameworks' profiles say nothing of inference (hf and Lit-GPT's model code do).
  const Framework runs = p.framework;
  if (!train && runs != Framework::hf && runs != Framework::litgpt)
    throw Error(Field::framework,
                std::string(to_string(runs)) +
                    " is a training framework; its profile has no inference rules (expected hf or "
                    "litgpt with " +
                    flag_for(Field::mode) + " infer)");
  const auto absent = [&](Field f) { return !given.count(field_key(f)); };
  if (p.loss.value && !v.loss && train && causal) {
    out.loss = p.loss.value;
    notes.push_back(note(p, std::string("loss ") + to_string(*p.loss.value), p.loss.source, Field::loss));
  }
  if (v.lora && train) {
    if (p.lora_fp32.value && !v.lora_fp32) {
      out.lora_fp32 = p.lora_fp32.value;
      notes.push_back(
          note(p, *p.lora_fp32.value ? "LoRA adapters in fp32" : "LoRA adapters in the model's format",
               p.lora_fp32.source, Field::lora_dtype));
    }
    if (p.lora_dropout.value && !v.lora_dropout) {
      out.lora_dropout = p.lora_dropout.value;
      notes.push_back(note(p, fmt::format("LoRA dropout {:g}", *p.lora_dropout.value), p.lora_dropout.source,
                           Field::lora_dropout));
    }
    if (p.lora_targets.value && !v.lora_targets) {
      out.lora_targets = parse_lora_targets(flag_for(Field::lora_targets), *p.lora_targets.value, 0);
      notes.push_back(note(p, "LoRA on " + std::string(*p.lora_targets.value), p.lora_targets.source,
                           Field::lora_targets));
    }
  }
  if (p.keep_logits.value && absent(Field::keep_logits) && train && causal) {
    out.keep_logits = *p.keep_logits.value;
    if (*p.keep_logits.value)
      notes.push_back(
          note(p, "the loop keeps the logits through backward", p.keep_logits.source, Field::keep_logits));
  }
  if (p.checkpointing.value && !v.checkpointing && train) {
    out.checkpointing = p.checkpointing.value;
    notes.push_back(note(p, std::string(to_string(*p.checkpointing.value)) + " activation checkpointing",
                         p.checkpointing.source, Field::checkpointing));
  }
  if (p.offloaded_checkpoints.value && *p.offloaded_checkpoints.value && train &&
      out.checkpointing.value_or(Checkpointing::none) == Checkpointing::full) {
    out.offloaded_checkpoints = true;
    notes.push_back(note(p, "each checkpointed layer's input but the last offloaded to pinned host memory",
                         p.offloaded_checkpoints.source, Field::checkpointing));
  }
  if (p.bitsandbytes.value && !v.bitsandbytes && train && v.lora && is_nf4(v.quantize)) {
    out.bitsandbytes = p.bitsandbytes.value;
    notes.push_back(note(p, "bitsandbytes " + to_string(*p.bitsandbytes.value), p.bitsandbytes.source,
                         Field::bitsandbytes));
  }
  return out;
}

void apply_profile_runtime(const PlanValues& v, EstimateRequest& r) {
  const FrameworkProfile& p = framework_profile(r.framework);
  const Optimizer& o = r.optimizer;
  const bool torch_adam =
      o.kind == StateKind::copies && o.copies == 2 && o.step_per_tensor && !o.transformers_loop;
  if (!p.optimizer_loop.value || v.optimizer_loop || r.mode != Mode::train || !torch_adam) return;
  if (r.torch.before(p.optimizer_loop_from_torch[0], p.optimizer_loop_from_torch[1])) return;
  if (r.transformers.before(p.optimizer_loop_from_transformers[0], p.optimizer_loop_from_transformers[1]))
    return;
  r.optimizer_loop = *p.optimizer_loop.value;
  r.model.notes.push_back(note(p, std::string("optimizer loop ") + loop_name(*p.optimizer_loop.value),
                               p.optimizer_loop.source, Field::optimizer_loop));
}

}  // namespace memplan::cli
