// The assumption sentences of an estimate (render_terms.hpp): what the numbers take for granted,
// built from the request, the estimate's codes and the activation ledger's notes.
#include <fmt/format.h>

#include <memplan/framework_profile.hpp>
#include <memplan/quantity.hpp>
#include <memplan/storage_format.hpp>
#include "core/memory/factored_state.hpp"

#include "cli/options.hpp"
#include "cli/render_terms.hpp"

namespace memplan::cli {
namespace {

const char* factored_note(FactoredShapes s) {
  switch (s) {
    case FactoredShapes::architecture:
      return "row + column statistics of the architecture's weight matrices, full size for the ";
    case FactoredShapes::square:
      return "assumes the parameters sit in ";
    case FactoredShapes::width4096:
      break;
  }
  return "assumes 4096-wide weight matrices (no architecture or tensor count given)";
}

// --seq beyond max_position_embeddings (a preset's max_positions). A rotary model runs there but
// was not trained there; a learned position table is refused before (model_context.cpp).
std::string seq_beyond_context_text(const Note& n) {
  return "--seq " + group_thousands(n.n[0]) + " is longer than the " + group_thousands(n.n[1]) +
         " positions the model was trained for (max_position_embeddings): it runs, but its output past them "
         "is not what it was trained to give";
}

std::string lora_note(const Estimate& e, const EstimateRequest& r) {
  return "LoRA r=" + std::to_string(e.lora->rank) + " on " + lora_target_names(*e.lora) + ": " +
         group_thousands(e.trainable_parameters) + " trainable adapter parameters (" +
         (r.fp32_lora_adapters()
              ? std::string("fp32, as peft keeps them on a half model: each adapted input cast to fp32")
              : "in the weights' format " + r.recipe.weights.name) +
         (r.lora->dropout > 0.0 ? fmt::format("; dropout {:g} on their input", r.lora->dropout)
                                : std::string()) +
         "), gradients and optimizer state for them only; base weights frozen" +
         (r.quantize ? " in " + storage_format(*r.quantize).name : "") +
         (is_nf4(r.quantize) ? " (QLoRA)" : "") +
         (e.timeline.load_peak_bytes
              ? "; each weight quantised on the GPU as it loads, replayed before step 1 (" +
                    std::string(framework_profile(r.framework).weight_load.source) + ")"
              : std::string());
}

}  // namespace

std::vector<std::string> input_warnings(const Estimate& e) {
  std::vector<std::string> out;
  for (uint8_t i = 0; i < e.note_count; ++i)
    if (e.notes[i].code == NoteCode::seq_beyond_context) out.push_back(seq_beyond_context_text(e.notes[i]));
  return out;
}

// The notes in words: the model's notes first, then the estimate's (the ledger's where it says).
std::vector<std::string> assumptions(const Estimate& e, const EstimateRequest& r,
                                     const LedgerDetail& ledger) {
  std::vector<std::string> out;
  for (const std::string& note : r.model.notes) out.push_back(with_flags(note));
  for (uint8_t i = 0; i < e.note_count; ++i) {
    const Note& n = e.notes[i];
    switch (n.code) {
      case NoteCode::blockwise8bit:
        out.push_back(
            r.optimizer.name +
            ": bitsandbytes blockwise quantisation, 256-element blocks; tensors under 4096 elements stay "
            "32-bit (not modelled)");
        break;
      case NoteCode::factored: {
        const auto shapes = static_cast<FactoredShapes>(n.n[0]);
        std::string s = std::string("adafactor: ") + factored_note(shapes);
        if (shapes == FactoredShapes::architecture) s += std::to_string(n.n[1]) + " other parameters";
        if (shapes == FactoredShapes::square) s += std::to_string(n.n[1]) + " square matrices";
        out.push_back(s);
        break;
      }
      case NoteCode::steps_unknown_tensors:
        out.push_back(r.optimizer.name +
                      "'s per-tensor step counters (4 B each) not counted: the tensor count is unknown "
                      "(--tensors N)");
        break;
      case NoteCode::steps_unknown_trainable:
        out.push_back(r.optimizer.name +
                      "'s step counters of the trainable tensors not counted: their number is unknown");
        break;
      case NoteCode::seq_beyond_context:
        out.push_back(seq_beyond_context_text(n));
        break;
      case NoteCode::activations_need_seq:
        out.push_back("activations not counted: give --seq (the model's context is " +
                      (n.n[0] ? group_thousands(n.n[0]) : std::string("unknown")) + ") to count them" +
                      std::string(e.mode == Mode::infer ? " and the KV cache" : ""));
        break;
      case NoteCode::activations_unknown:
        out.push_back(
            "activations not counted: give --activation-bytes-per-row, --mlp or an architecture with --seq");
        break;
      case NoteCode::checkpointing_compute:
        out.push_back(fmt::format("checkpointing {}: about {:.0f}% more compute per step",
                                  to_string(r.checkpointing), 100.0 * n.x));
        break;
      case NoteCode::ledger:
        for (const std::string& note : ledger.notes) out.push_back(with_flags(note));
        break;
      case NoteCode::largest_layer_unknown:
        out.push_back(
            "the largest layer is unknown: give --largest-layer for ZeRO-3/FSDP's gathered buffers");
        break;
      case NoteCode::lora:
        out.push_back(lora_note(e, r));
        break;
      case NoteCode::trainable_share:
        out.push_back("trainable share " + std::to_string(n.x) + ": gradients and optimizer state for " +
                      group_thousands(n.n[0]) + " parameters only; frozen weights still held");
        break;
      case NoteCode::loss_scaling:
        out.push_back("fp16 training needs loss scaling (torch.amp.GradScaler); its state is a few scalars");
        break;
      case NoteCode::gib:
        if (e.timeline.reserved.present)
          out.push_back(
              "GiB = 2^30 bytes; the fit verdict compares what nvidia-smi shows: the CUDA caching "
              "allocator's "
              "reserved peak (the step replayed tensor by tensor through its block rounding, 2 MiB / 20 MiB "
              "segments and best-fit splitting, steps 1-3) + the overhead (CUDA context), not the allocated "
              "peak: an out-of-memory error is a cudaMalloc of a new segment failing, and memory cached free "
              "inside split segments cannot be given back (torch releases only whole free segments and "
              "retries, so a run near the limit may still fit)");
        else
          out.push_back(
              "GiB = 2^30 bytes; allocator rounding and fragmentation (typically 5-15%) are not included");
        break;
      case NoteCode::inference_split:
        out.push_back(
            "tensor parallel " + std::to_string(static_cast<uint64_t>(n.x)) +
            ": heads, MLP and vocabulary split, norms replicated; " + std::to_string(n.n[0]) +
            " KV head(s) per GPU" +
            (n.n[1] > 1 ? ", each held by " + std::to_string(n.n[1]) + " GPUs (tp > KV heads)" : "") +
            "; figures are the most-loaded GPU's");
        break;
      case NoteCode::paged:
        out.push_back(n.n[0] ? r.optimizer.name +
                                   ": bitsandbytes pages the state of tensors of 100,000 numbers or more "
                                   "(cudaMallocManaged); "
                                   "smaller tensors' state and the rest stay on the GPU and are counted"
                             : r.optimizer.name +
                                   ": the trainable tensors' shapes are unknown, so all of its state is "
                                   "counted on the GPU "
                                   "(bitsandbytes would page the tensors of 100,000 numbers or more)");
        break;
    }
  }
  return out;
}

}  // namespace memplan::cli
