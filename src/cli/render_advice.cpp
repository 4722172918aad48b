// Words advise()'s plain result: each change, its cost and its notes, from their codes and numbers.
#include "cli/render_advice.hpp"

#include <fmt/format.h>

#include <memplan/quantity.hpp>
#include <memplan/sharding.hpp>

namespace memplan::cli {
namespace {

const char* half_text(bool bf16) { return bf16 ? "bf16" : "fp16"; }

// "r=16 on q_proj,v_proj (4,194,304 trainable, 0.06%)"
std::string lora_text(const AdviceChange& c) {
  return "r=" + std::to_string(c.lora_rank) + " on " + c.lora_targets + " (" +
         group_thousands(c.lora_parameters) + " trainable, " + fmt::format("{:.2f}%", 100.0 * c.lora_share) +
         ")";
}

}  // namespace

// Tier 0 of the playbook: free fixes no estimate can see, one line each.
const std::vector<std::string>& tier0_checklist() {
  static const std::vector<std::string> list = {
      "restart the kernel or process: a caught out-of-memory error's traceback (and a notebook's old cells) "
      "keep the failed step's tensors alive",
      "log loss.item(), not loss: appending the tensor keeps every batch's computation graph alive (the "
      "commonest slow leak)",
      "wrap evaluation in torch.no_grad() (or torch.inference_mode()): otherwise it stores activations for a "
      "backward that never comes",
      "free what you no longer need: del, then gc.collect(), then torch.cuda.empty_cache() (nvidia-smi "
      "counts PyTorch's cache as used)",
  };
  return list;
}

// What a change does: "micro-batch 4 x 4 accumulation steps (effective batch 16)".
std::string change_text(const AdviceChange& c) {
  switch (c.knob) {
    case AdviceKnob::micro_batch:
      if (c.mode == Mode::infer) return "batch " + group_thousands(c.batch);
      return "micro-batch " + group_thousands(c.batch) + " x " + group_thousands(c.steps) +
             " accumulation steps (effective batch " + group_thousands(c.batch * c.steps) + ")";
    case AdviceKnob::autocast:
      return std::string("autocast amp-") + half_text(c.bf16) + (c.bf16 ? "" : " with a GradScaler");
    case AdviceKnob::sequence:
      return "sequence " + group_thousands(c.seq) + " (was " + group_thousands(c.was) + ")";
    case AdviceKnob::checkpointing:
      return c.checkpointing == Checkpointing::selective ? "checkpointing selective (recompute attention)"
                                                         : "checkpointing full (one input per layer)";
    case AdviceKnob::optimizer_8bit:
      return "optimizer adamw-8bit (bitsandbytes)";
    case AdviceKnob::adafactor:
      return "optimizer adafactor (factored second moment)";
    case AdviceKnob::lora:
      return "LoRA " + lora_text(c) +
             (c.frozen_half ? std::string(", frozen weights ") + half_text(c.bf16) : "");
    case AdviceKnob::qlora:
      return "QLoRA " + lora_text(c) + ", frozen weights nf4" +
             (c.recipe.empty() ? "" : ", " + c.recipe + " compute, fp32 adapters");
    case AdviceKnob::sharding:
      return (c.found ? "" : "even ") + std::to_string(c.gpus) + " x " + c.gpu + " with " +
             sharding_engine(c.sharding);
    case AdviceKnob::offload: {
      const std::string where =
          c.gpus > 1 ? sharding_engine(c.sharding) + " on the " + std::to_string(c.gpus) + " GPUs" : "1 GPU";
      return c.offload == Offload::parameters
                 ? "CPU offload of parameters and optimizer (ZeRO-Infinity, " + where + ")"
                 : "CPU offload of the optimizer (DeepSpeed ZeRO-Offload, " + where + ")";
    }
    case AdviceKnob::gpu:
      if (c.found) return "a bigger GPU: " + c.gpu + " (" + format_bytes(c.gpu_bytes, Units::gib) + ")";
      return "no single preset GPU fits as is (largest: " + c.gpu + ")";
    case AdviceKnob::quantize:
      return "weights as llama.cpp " + c.format + " (" + format_bytes(c.host_bytes, Units::gib) + ")";
    case AdviceKnob::kv_quantize:
      return "KV cache in " + c.format + " (llama.cpp --cache-type-k/-v " + c.format + " -fa; vLLM fp8)";
    case AdviceKnob::layer_offload:
      return "llama.cpp -ngl " + std::to_string(c.gpus) + " of " + std::to_string(c.was) +
             " layers on the GPU, the rest in host memory";
    case AdviceKnob::tensor_parallel:
      return "tensor parallel over " + std::to_string(c.gpus) + " x " + c.gpu +
             " (vllm serve --tensor-parallel-size " + std::to_string(c.gpus) + ")";
  }
  return "";
}

// What a change costs the user: "x4 accumulation steps: same effective batch, more steps".
std::string cost_text(const AdviceChange& c) {
  switch (c.knob) {
    case AdviceKnob::micro_batch:
      if (c.mode == Mode::infer) return "more passes for the same requests";
      return "x" + group_thousands(c.steps) + " accumulation steps: same effective batch, more steps";
    case AdviceKnob::autocast:
      return c.bf16 ? "none in memory: weights stay fp32; faster on tensor cores; not bit-for-bit repeatable"
                    : "fp16 range: needs torch.amp.GradScaler (loss scaling); not bit-for-bit repeatable";
    case AdviceKnob::sequence:
      return c.mode == Mode::train ? "trains on shorter contexts: truncate or split long samples"
                                   : "a shorter context window";
    case AdviceKnob::checkpointing:
      return c.checkpointing == Checkpointing::selective
                 ? "+a few % compute per step (the attention core is recomputed)"
                 : "+~30% compute per step";
    case AdviceKnob::optimizer_8bit:
      return "lower quality risk: 8-bit optimizer state; bitsandbytes, NVIDIA only";
    case AdviceKnob::adafactor:
      return "different convergence: factored statistics, no momentum; retune the learning rate";
    case AdviceKnob::lora:
      return "trains adapters only: may fall short of a full fine-tune";
    case AdviceKnob::qlora:
      return "4-bit frozen weights: small quality loss, slower matmuls (dequantisation); bitsandbytes, "
             "NVIDIA "
             "only";
    case AdviceKnob::sharding:
      return std::to_string(c.gpus) + "x the GPUs; gradient communication every step; effective batch x" +
             std::to_string(c.gpus) + " at the same micro-batch";
    case AdviceKnob::offload:
      return "slower steps: PCIe transfers and the optimizer step on the CPU; " +
             format_bytes(c.host_bytes, Units::gib) + " of host memory";
    case AdviceKnob::gpu:
      return "new hardware: costs money (or a cloud instance)";
    case AdviceKnob::quantize:
      return "quality loss grows as the bits shrink (q8_0 near lossless, q4_k_m small, q2_k large); a GGUF "
             "runner (llama.cpp, Ollama)";
    case AdviceKnob::kv_quantize:
      return c.format == "q8_0" ? "near lossless; needs flash attention in llama.cpp"
                                : "some quality loss on long contexts; needs flash attention in llama.cpp";
    case AdviceKnob::layer_offload:
      return "the CPU runs the other layers: tokens per second fall several-fold; " +
             format_bytes(c.host_bytes, Units::gib) + " of weights in host memory";
    case AdviceKnob::tensor_parallel:
      return std::to_string(c.gpus) + "x the GPUs; two all-reduces per layer (NVLink, or slower over PCIe)";
  }
  return "";
}

// A note that goes with a change; `presets` give a unified-memory GPU's budget note.
std::string note_text(const AdviceNote& n, const std::vector<GpuSpec>& presets) {
  switch (n.code) {
    case AdviceNoteCode::accumulation_divides_loss:
      return "gradient accumulation: divide the loss by the " + group_thousands(n.count) +
             " steps (or the gradients come out " + group_thousands(n.count) + "x too large)";
    case AdviceNoteCode::effective_batch_differs:
      return "effective batch " + group_thousands(n.count) + " instead of " + group_thousands(n.other) +
             ": adjust the learning rate or the data loader";
    case AdviceNoteCode::batchnorm_micro_batch:
      return "the model has BatchNorm: its statistics see the micro-batch, so accumulation does not "
             "reproduce "
             "the large batch";
    case AdviceNoteCode::autocast_forward_only:
      return "put torch.autocast around the forward pass, not around the training loop";
    case AdviceNoteCode::no_bf16_hardware:
      return n.gpu + " has no bf16 hardware: amp-fp16 with torch.amp.GradScaler";
    case AdviceNoteCode::sequence_floor:
      return "sequence: even " + group_thousands(n.count) + " tokens (a quarter of " +
             group_thousands(n.other) + ") do not fit; shorter is a different task";
    case AdviceNoteCode::checkpointing_how:
      return "gradient checkpointing: model.gradient_checkpointing_enable() or torch.utils.checkpoint";
    case AdviceNoteCode::lora_peft:
      return "LoRA: peft LoraConfig(r=" + std::to_string(n.count) + ", target_modules=[" + n.targets +
             "]); activations counted with frozen base weights";
    case AdviceNoteCode::fp16_adapters_loss_scaling:
      return "fp16 adapters need loss scaling (torch.amp.GradScaler)";
    case AdviceNoteCode::sharding_activations:
      return "sharding: activations are not sharded; each GPU keeps its own micro-batch's";
    case AdviceNoteCode::unified_memory:
      for (const GpuSpec& g : presets)
        if (g.id == n.gpu) return g.budget_note;
      return "";
  }
  return "";
}

// The changes joined with " + ", their costs with "; ".
std::string suggestion_change(const Suggestion& s) {
  std::string t;
  for (const AdviceChange& c : s.changes) t += (t.empty() ? "" : " + ") + change_text(c);
  return t;
}

std::string suggestion_cost(const Suggestion& s) {
  std::string t;
  for (const AdviceChange& c : s.changes) t += (t.empty() ? "" : "; ") + cost_text(c);
  return t;
}

std::vector<std::string> suggestion_notes(const Suggestion& s, const std::vector<GpuSpec>& presets) {
  std::vector<std::string> out;
  for (const AdviceChange& c : s.changes)
    for (const AdviceNote& n : c.notes) out.push_back(note_text(n, presets));
  return out;
}

}  // namespace memplan::cli
