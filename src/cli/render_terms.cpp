// Words for the estimate's plain values: term labels, formats and details, the --explain
// arithmetic lines and the assumption sentences, all built from numbers and codes.
#include "cli/render_terms.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <memplan/quantity.hpp>
#include "core/memory/factored_state.hpp"

#include "cli/options.hpp"
#include "cli/render_estimate.hpp"
#include "cli/render_sharding.hpp"

namespace memplan::cli {

namespace {
// --- Words for the core's values ------------------------------------------------------------

std::string cost_text(ElementCost c) {
  if (c.den == 1) return std::to_string(c.num) + " B";
  return fmt::format("{:.6g} B", c.bytes());
}

const StorageFormat& quantized_format(const EstimateRequest& r) { return storage_format(*r.quantize); }

std::string kv_format_name(const EstimateRequest& r) {
  return r.kv_format ? storage_format(*r.kv_format).name : r.recipe.activations.name;
}

std::string format_name(FormatId f, const EstimateRequest& r) {
  switch (f) {
    case FormatId::weights:
      return r.recipe.weights.name;
    case FormatId::gradients:
      return r.recipe.gradients.name;
    case FormatId::master:
      return r.recipe.master.name;
    case FormatId::optimizer_state:
      return r.recipe.optimizer_state.name;
    case FormatId::activations:
      return r.recipe.activations.name;
    case FormatId::quantized:
      return quantized_format(r).name;
    case FormatId::kv:
      return kv_format_name(r);
    case FormatId::stored:
      return r.model.weight_format;
    case FormatId::fp32:
      return "fp32";
    case FormatId::int8_blockwise:
      return "int8 (blockwise)";
    case FormatId::none:
      break;
  }
  return "-";
}

ElementCost format_cost(FormatId f, const EstimateRequest& r) {
  switch (f) {
    case FormatId::weights:
      return r.recipe.weights.cost;
    case FormatId::gradients:
      return r.recipe.gradients.cost;
    case FormatId::master:
      return r.recipe.master.cost;
    case FormatId::optimizer_state:
      return r.recipe.optimizer_state.cost;
    case FormatId::activations:
      return r.recipe.activations.cost;
    case FormatId::quantized:
      return quantized_format(r).cost;
    case FormatId::fp32:
      return {4, 1};
    case FormatId::int8_blockwise:
      return k_blockwise8bit_cost;
    default:
      break;
  }
  return {0, 1};
}

const char* counted_name(Counted c) {
  switch (c) {
    case Counted::parameters:
      return "parameters";
    case Counted::frozen_weights:
      return "frozen weights";
    case Counted::trainable_weights:
      return "trainable weights";
    case Counted::gradients:
      return "gradients";
    case Counted::gradient_copy:
      return "fp32 gradient copy for the step";
    case Counted::master_weights:
      return "master weights";
    case Counted::optimizer_state:
      return "";
    case Counted::unquantised_embedding:
      return "embedding tables (not nn.Linear layers: the quantiser leaves them in the weight format)";
    case Counted::unquantised_lm_head:
      return "LM head (transformers skips the output embeddings when it quantises)";
  }
  return "";
}

const char* kv_buffer_name(KvBuffer b) {
  switch (b) {
    case KvBuffer::attention_scores:
      return "attention scores and probabilities (eager)";
    case KvBuffer::mlp_intermediate:
      return "MLP intermediate";
    case KvBuffer::logits:
      return "logits";
    case KvBuffer::none:
      break;
  }
  return "";
}

bool has_line(const Term& t, LineCode code) {
  for (uint8_t i = 0; i < t.line_count; ++i)
    if (t.lines[i].code == code) return true;
  return false;
}

bool has_product(const Term& t, Counted what) {
  for (uint8_t i = 0; i < t.line_count; ++i)
    if (t.lines[i].code == LineCode::product && t.lines[i].what == what) return true;
  return false;
}

// "7,000,000,000 x 4 B (fp32) = 28,000,000,000 B (26.1 GiB)"
std::string product_text(const std::string& what, uint64_t n, FormatId f, uint64_t bytes,
                         const EstimateRequest& r) {
  return what + " = " + group_thousands(n) + " x " + cost_text(format_cost(f, r)) + " (" + format_name(f, r) +
         ") = " + group_thousands(bytes) + " B (" + format_bytes(bytes, Units::gib) + ")";
}

std::string line_text(const Estimate& e, const Term& t, const Line& l, const EstimateRequest& r) {
  switch (l.code) {
    case LineCode::product: {
      if (l.what == Counted::optimizer_state) {
        const uint64_t copies = std::max<uint64_t>(l.n[1], 1);
        return product_text(r.optimizer.name + " state", l.n[0], l.format, l.bytes / copies, r) + " x " +
               std::to_string(copies) + " copies = " + group_thousands(l.bytes) + " B";
      }
      std::string s = product_text(counted_name(l.what), l.n[0], l.format, l.bytes, r);
      if (l.what == Counted::frozen_weights && l.format == FormatId::quantized)
        s += " [" + quantized_format(r).description + "]";
      return s;
    }
    case LineCode::stored_weights:
      return "parameters = " + group_thousands(l.bytes) + " B, the weights' stored bytes read from " +
             r.model.source;
    case LineCode::lora_adapters:
      return lora_arithmetic(*e.lora) + " (parameters = " + group_thousands(l.n[0]) + " base + " +
             group_thousands(l.n[1]) + " adapters = " + group_thousands(l.n[2]) + ")";
    case LineCode::blockwise_state:
      return r.optimizer.name + " state = " + group_thousands(l.n[0]) + " x " + std::to_string(l.n[1]) +
             " x (1 B + 4 B absmax / 256) = " + group_thousands(l.bytes) + " B";
    case LineCode::factored_state:
      return "adafactor state = " + group_thousands(l.n[0]) + " numbers x " +
             cost_text(format_cost(l.format, r)) + " = " + group_thousands(l.bytes) + " B";
    case LineCode::adapter_step_counters:
      return "step counters = " + group_thousands(l.n[0]) +
             " adapter tensors (A and B per matrix) x 4 B (float32) = " + group_thousands(l.bytes) + " B";
    case LineCode::step_counters:
      return "step counters = " + group_thousands(l.n[0]) +
             " tensors x 4 B (float32) = " + group_thousands(l.bytes) + " B";
    case LineCode::measured_rows:
      return "activations = batch " + group_thousands(l.n[0]) + " x " + group_thousands(l.n[1]) +
             " B per row (--activation-bytes-per-row) = " + group_thousands(l.bytes) + " B";
    case LineCode::layers_per_sample:
      return "activations per sample = " + std::to_string(l.n[0]) +
             " layers (layer 0: " + group_thousands(l.n[1]) + " B, others " + group_thousands(l.n[2]) +
             " B) + outside the layers = " + group_thousands(l.n[3]) + " B";
    case LineCode::batch_per_sample:
      return "activations = batch " + group_thousands(l.n[0]) + " x " + group_thousands(l.n[1]) +
             " B = " + group_thousands(l.bytes) + " B";
    case LineCode::autocast_weights:
      return "+ autocast's half-precision weight copies kept for backward = " + group_thousands(l.bytes) +
             " B (independent of batch)";
    case LineCode::mlp_working_buffer:
      return "working buffer = batch " + group_thousands(l.n[0]) + " x 2 x " + group_thousands(l.n[1]) +
             " x " + format_name(l.format, r) + " = " + group_thousands(l.bytes) + " B";
    case LineCode::kv_cache: {
      const Term& a = e.term(TermKind::activations);
      const char* buffer = a.line_count ? kv_buffer_name(static_cast<KvBuffer>(a.lines[0].n[0])) : "";
      return "KV cache = 2 x " + std::to_string(l.n[0]) + " layers x " + std::to_string(l.n[1]) +
             " kv heads x " + std::to_string(l.n[2]) + " head dim x " + std::to_string(l.n[3]) +
             " tokens x " + std::to_string(t.batch) + " batch x " + format_name(l.format, r) + " = " +
             std::to_string(l.bytes) +
             " B; working buffer = hidden states (2 x tokens of one pass x hidden) + " + buffer + " = " +
             std::to_string(a.lines[0].bytes) + " B";
    }
    case LineCode::kv_cache_layers:
    case LineCode::kv_cache_latent: {
      const Term& a = e.term(TermKind::activations);
      const char* buffer = a.line_count ? kv_buffer_name(static_cast<KvBuffer>(a.lines[0].n[0])) : "";
      const std::string tokens = std::to_string(t.per_sample) + " tokens";
      std::string s =
          l.code == LineCode::kv_cache_latent
              ? "KV cache (multi-head latent attention) = " + std::to_string(l.n[0]) +
                    " latent elements per token (kv_lora_rank + qk_rope_head_dim; a naive per-head cache "
                    "holds " +
                    std::to_string(l.n[1]) + ") x " + std::to_string(l.n[2]) + " layers x " + tokens
              : "KV cache = " + std::to_string(l.n[0]) + " elements per token (2 x kv heads x head dim) x (" +
                    std::to_string(l.n[1]) + " full layers x " + tokens + " + " + std::to_string(l.n[2]) +
                    " windowed layers x " + std::to_string(l.n[3]) + " tokens)";
      return s + " x " + std::to_string(t.batch) + " batch x " + format_name(l.format, r) + " = " +
             std::to_string(l.bytes) + " B; working buffer = hidden states (2 x seq x hidden) + " + buffer +
             " = " + std::to_string(a.lines[0].bytes) + " B";
    }
    case LineCode::kv_cache_cross: {
      const Term& a = e.term(TermKind::activations);
      const char* buffer = a.line_count ? kv_buffer_name(static_cast<KvBuffer>(a.lines[0].n[0])) : "";
      return "KV cache = " + std::to_string(l.n[0]) + " elements per token (2 x kv heads x head dim) x (" +
             std::to_string(l.n[1]) + " self-attention layers x " + std::to_string(t.per_sample) +
             " text tokens + " + std::to_string(l.n[2]) + " cross-attention layers x " +
             std::to_string(l.n[3]) + " image tokens) x " + std::to_string(t.batch) + " batch x " +
             format_name(l.format, r) + " = " + std::to_string(l.bytes) +
             " B; working buffer = hidden states (2 x seq x hidden) + " + buffer + " = " +
             std::to_string(a.lines[0].bytes) + " B";
    }
    case LineCode::kv_working_buffer:
      return std::string("working buffer (") + kv_buffer_name(static_cast<KvBuffer>(l.n[0])) +
             ") = " + group_thousands(l.bytes) + " B" +
             (l.n[1] ? " for one prefill pass of " + group_thousands(l.n[1]) + " tokens (--prefill-chunk)"
                     : "");
    case LineCode::bnb_dequant_weight:
      return "bitsandbytes dequantises the largest 4-bit weight for the prompt's matmul (Lit-GPT: an fp16 "
             "copy, cast to bf16) = " +
             group_thousands(l.n[0]) + " x 4 B = " + group_thousands(l.bytes) + " B";
    case LineCode::most_loaded:
      return std::string(term_key(t.kind)) + " on the most-loaded GPU = " + group_thousands(l.bytes) +
             " B (one GPU would hold " + group_thousands(l.n[0]) + " B)";
    case LineCode::overhead:
      return "per-process overhead = " + group_thousands(l.bytes) + " B (" +
             format_bytes(l.bytes, Units::gib) +
             (l.n[0] ? ", the default; --overhead to change)" : ", --overhead)");
  }
  return "";
}

}  // namespace

std::string term_label(const Estimate& e, const Term& t) {
  switch (t.kind) {
    case TermKind::parameters:
      return "Parameters";
    case TermKind::gradients:
      return "Gradients";
    case TermKind::optimizer_state:
      return "Optimizer state";
    case TermKind::activations:
      if (t.basis == Basis::mlp_buffer || t.basis == Basis::kv_buffer) return "Working buffer";
      if (t.basis == Basis::measured && e.mode == Mode::infer) return "Working activations";
      return "Activations";
    case TermKind::kv_cache:
      return "KV cache";
    case TermKind::buffers:
      return "Gathered buffers";
    case TermKind::overhead:
      return "Overhead";
  }
  return "";
}

namespace {

std::string optimizer_format(const EstimateRequest& r) {
  std::string format;
  if (r.recipe.has_master()) format = r.recipe.master.name + " master";
  const std::string plus = format.empty() ? "" : " + ";
  switch (r.optimizer.kind) {
    case StateKind::copies:
      if (r.optimizer.copies)
        format += plus + std::to_string(r.optimizer.copies) + " x " + r.recipe.optimizer_state.name;
      break;
    case StateKind::blockwise8bit:
      format += plus + "2 x int8 (blockwise)";
      break;
    case StateKind::factored:
      format += plus + "factored " + r.recipe.optimizer_state.name;
      break;
  }
  return format.empty() ? "-" : format;
}

}  // namespace

std::string term_format(const Term& t, const EstimateRequest& r) {
  switch (t.kind) {
    case TermKind::parameters:
      if (t.basis == Basis::stored)
        return r.model.weight_format.empty() ? "as stored" : r.model.weight_format + " (as stored)";
      if (t.basis == Basis::quantized)
        return has_product(t, Counted::trainable_weights)
                   ? quantized_format(r).name + " frozen + " + r.recipe.weights.name
                   : quantized_format(r).name;
      return r.recipe.weights.name;
    case TermKind::gradients:
      if (t.basis == Basis::none_inference) return "-";
      return format_name(t.format, r) + (t.plus_fp32 ? " + fp32 copy" : "");
    case TermKind::optimizer_state:
      if (t.basis == Basis::none_inference) return "-";
      return optimizer_format(r);
    case TermKind::activations:
      if (t.basis == Basis::measured) return "as measured";
      if (t.basis == Basis::not_counted) return "-";
      return r.recipe.activations.name;
    case TermKind::kv_cache:
      return t.line_count ? kv_format_name(r) : "-";
    case TermKind::buffers:
    case TermKind::overhead:
      break;
  }
  return "-";
}

std::string term_detail(const Estimate& e, const Term& t, const EstimateRequest& r) {
  std::string d;
  switch (t.kind) {
    case TermKind::parameters:
      d = "1 copy";
      break;
    case TermKind::gradients:
      d = t.basis == Basis::none_inference ? "none (inference)" : "1 per trainable parameter";
      break;
    case TermKind::optimizer_state:
      if (t.basis == Basis::none_inference) {
        d = "none (inference)";
      } else {
        d = r.optimizer.description;
        if (has_line(t, LineCode::step_counters) || has_line(t, LineCode::adapter_step_counters))
          d += ", plus a float32 step per tensor";
      }
      break;
    case TermKind::activations:
      switch (t.basis) {
        case Basis::measured:
          d = "batch " + group_thousands(t.batch) + " x " + group_thousands(t.per_sample) + " B/row";
          break;
        case Basis::ledger:
          d = "batch " + group_thousands(t.batch) + " x " + group_thousands(t.per_sample) + " B/sample";
          if (t.fixed_bytes) d += " + " + format_bytes(t.fixed_bytes, Units::gib) + " weight casts";
          break;
        case Basis::mlp_buffer:
          d = "input + output of the widest layer";
          break;
        case Basis::kv_buffer:
          d = kv_buffer_name(static_cast<KvBuffer>(t.lines[0].n[0]));
          break;
        case Basis::not_counted:
          d = "not counted";
          break;
        default:
          break;
      }
      break;
    case TermKind::kv_cache:
      if (t.line_count) d = "batch " + group_thousands(t.batch) + " x seq " + group_thousands(t.per_sample);
      break;
    case TermKind::buffers:
      return "layers gathered by ZeRO-3/FSDP, unsharded copies";
    case TermKind::overhead:
      return "CUDA context + library workspaces";
  }
  if (e.sharded && t.bytes != t.single_gpu_bytes) {
    const uint64_t gpus = e.sharded->layout.gpus;
    d += gpus == 1 ? " (the only GPU)"
                   : " (" + rank_kind_text(e.sharded->heaviest(), e.sharded->layout) + " of " +
                         std::to_string(gpus) + " GPUs)";
  }
  return d;
}

// The arithmetic lines of every term, in order (the buffers' from the sharding library).
std::vector<std::string> arithmetic(const Estimate& e, const EstimateRequest& r) {
  std::vector<std::string> out;
  for (const Term& t : e.terms) {
    if (!e.has(t.kind)) continue;
    if (t.kind == TermKind::buffers && e.sharded) {
      const std::vector<std::string> lines = sharding_explain(*e.sharded);
      out.insert(out.end(), lines.begin(), lines.end());
      continue;
    }
    for (uint8_t i = 0; i < t.line_count; ++i) out.push_back(line_text(e, t, t.lines[i], r));
  }
  return out;
}

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

std::string lora_note(const Estimate& e, const EstimateRequest& r) {
  return "LoRA r=" + std::to_string(e.lora->rank) + " on " + lora_target_names(*e.lora) + ": " +
         group_thousands(e.trainable_parameters) + " trainable adapter parameters (" +
         (r.fp32_lora_adapters()
              ? std::string("fp32, as peft keeps them on a half model: each adapted input cast to fp32")
              : "in the weights' format " + r.recipe.weights.name) +
         (r.lora->dropout > 0.0 ? fmt::format("; dropout {:g} on their input", r.lora->dropout)
                                : std::string()) +
         "), gradients and optimizer state for them only; base weights frozen" +
         (r.quantize ? " in " + quantized_format(r).name : "") +
         (r.quantize == StorageFormatId::nf4 || r.quantize == StorageFormatId::nf4_dq ? " (QLoRA)" : "");
}

}  // namespace

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
            "adamw-8bit: bitsandbytes blockwise quantisation, 256-element blocks; tensors under 4096 "
            "elements "
            "stay 32-bit (not modelled)");
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
        out.push_back("--seq " + group_thousands(n.n[0]) + " is longer than the model's context (" +
                      group_thousands(n.n[1]) + " positions)");
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
    }
  }
  return out;
}

}  // namespace memplan::cli
