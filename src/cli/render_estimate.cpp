#include "cli/render_estimate.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <memplan/quantity.hpp>
#include "core/memory/activation_term.hpp"
#include "core/memory/factored_state.hpp"

#include "cli/options.hpp"
#include "cli/render_fit.hpp"
#include "cli/render_sharding.hpp"
#include "cli/text_table.hpp"

namespace memplan::cli {
namespace {

using nlohmann::json;
using Align = TextTable::Align;

bool shown(const Estimate& e, const Term& t) {
  if (!e.has(t.kind)) return false;
  if (t.kind == TermKind::kv_cache) return e.mode == Mode::infer || t.bytes;
  return true;
}

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
      if (l.what == Counted::frozen_weights) s += " [" + quantized_format(r).description + "]";
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
             std::to_string(l.bytes) + " B; working buffer = hidden states (2 x seq x hidden) + " + buffer +
             " = " + std::to_string(a.lines[0].bytes) + " B";
    }
    case LineCode::kv_working_buffer:
      return std::string("working buffer (") + kv_buffer_name(static_cast<KvBuffer>(l.n[0])) +
             ") = " + group_thousands(l.bytes) + " B";
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
         group_thousands(e.trainable_parameters) + " trainable adapter parameters (in the weights' format " +
         r.recipe.weights.name + "), gradients and optimizer state for them only; base weights frozen" +
         (r.quantize ? " in " + quantized_format(r).name : "") +
         (r.quantize == StorageFormatId::nf4 || r.quantize == StorageFormatId::nf4_dq ? " (QLoRA)" : "");
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
    }
  }
  return out;
}

std::string ledger_title(const Estimate& e, const EstimateRequest& r) {
  if (e.ledger.mlp) return "Saved tensors of the MLP (batch " + group_thousands(r.batch) + ")";
  return "Saved tensors of one layer (batch " + group_thousands(r.batch) + " x seq " +
         group_thousands(r.seq) + ", " + to_string(r.attention) + " attention, checkpointing " +
         to_string(r.checkpointing) + ")";
}

std::string verdict_cell(const FitRow& r, bool color) {
  std::string v = verdict_name(r.verdict);
  if (!r.warnings.empty() && !r.gpu.budget_bytes) v += " !";
  if (!color) return v;
  const char* c = r.verdict == Verdict::fits    ? "\033[32m"
                  : r.verdict == Verdict::tight ? "\033[33m"
                                                : "\033[31m";
  return c + v + "\033[0m";
}

std::string breakdown_table(const Estimate& e, const EstimateRequest& r, const OutputOptions& o) {
  TextTable t({{"term", Align::left},
               {"bytes", Align::right},
               {"size", Align::right},
               {"format", Align::left},
               {"detail", Align::left}});
  for (const Term& term : e.terms) {
    if (!shown(e, term)) continue;
    if (term.kind == TermKind::overhead)
      t.add_row({"Total", group_thousands(e.total_bytes()), format_bytes(e.total_bytes(), o.units), "", ""});
    t.add_row({term_label(e, term), group_thousands(term.bytes), format_bytes(term.bytes, o.units),
               term_format(term, r), term_detail(e, term, r)});
  }
  t.add_row({"Required", group_thousands(e.required_bytes()), format_bytes(e.required_bytes(), o.units), "",
             "total + overhead"});
  return o.format == Format::markdown ? t.render_markdown() : t.render();
}

std::string explain_text(const Estimate& e, const EstimateRequest& r, const LedgerDetail& ledger,
                         const OutputOptions& o) {
  std::string out = "\nArithmetic:\n";
  for (const std::string& line : arithmetic(e, r)) out += "  " + line + "\n";
  out += "  total = " + group_thousands(e.total_bytes()) +
         " B; required = total + overhead = " + group_thousands(e.required_bytes()) + " B (" +
         format_bytes(e.required_bytes(), o.units) + ")\n";
  if (!ledger.rows.empty()) {
    out += "\n" + ledger_title(e, r) + "\n";
    TextTable t({{"saved tensor", Align::left},
                 {"shape", Align::left},
                 {"format", Align::left},
                 {"bytes", Align::right}});
    for (const LedgerRow& row : ledger.rows)
      t.add_row({row.name, row.shape, row.format, group_thousands(row.bytes)});
    out += o.format == Format::markdown ? t.render_markdown() : t.render();
  }
  return out;
}

std::string assumptions_text(const Estimate& e, const EstimateRequest& r, const LedgerDetail& ledger) {
  std::string out = "\nAssumptions:\n";
  for (const std::string& a : assumptions(e, r, ledger)) out += "  - " + a + "\n";
  return out;
}

std::string csv(const Estimate& e, const EstimateRequest& r, const std::vector<FitRow>& fit) {
  CsvWriter w;
  w.row({"kind", "name", "bytes", "memory_bytes", "spare_bytes", "verdict", "format"});
  for (const Term& t : e.terms)
    if (e.has(t.kind))
      w.row({"term", term_key(t.kind), std::to_string(t.bytes), "", "", "", term_format(t, r)});
  w.row({"total", "total", std::to_string(e.total_bytes()), "", "", "", ""});
  w.row({"total", "required", std::to_string(e.required_bytes()), "", "", "", ""});
  for (const FitRow& f : fit)
    w.row({"gpu", f.gpu.id, std::to_string(f.required_bytes), std::to_string(f.memory_bytes),
           std::to_string(f.spare_bytes), verdict_name(f.verdict), ""});
  return w.str();
}

}  // namespace

std::string lora_arithmetic(const LoraAdapters& a) {
  auto terms = [&a](const LoraMatrix* m, uint8_t n) {
    std::string text;
    for (uint8_t i = 0; i < n; ++i)
      text += (text.empty() ? "" : " + ") +
              (m[i].count > 1 ? std::to_string(m[i].count) + " x " : std::string()) + std::to_string(a.rank) +
              " x (" + std::to_string(m[i].in) + " + " + std::to_string(m[i].out) + ")";
    return text;
  };
  std::string sum;
  if (a.attention_count)
    sum = std::to_string(a.attention_blocks) + " attention blocks x (" +
          terms(a.attention.data(), a.attention_count) + ")";
  if (a.mlp_count)
    sum += (sum.empty() ? "" : " + ") + std::to_string(a.mlp_blocks) + " MLP blocks x (" +
           terms(a.mlp.data(), a.mlp_count) + ")";
  return "LoRA adapters (r=" + std::to_string(a.rank) + " on " + lora_target_names(a) + ") = " + sum + " = " +
         group_thousands(a.parameters) + " trainable parameters";
}

std::string describe_model(const EstimateRequest& r, const Estimate& e) {
  std::string s = r.model.name.empty() ? r.model.id : r.model.name;
  s += " (" + group_thousands(r.model.parameters) + " parameters)";
  s += ", " + r.recipe.name;
  if (r.mode == Mode::train) {
    s += ", " + r.optimizer.name + ", training";
    if (r.trainable < 1.0) s += " " + group_thousands(e.trainable_parameters) + " of them";
    if (e.lora) s += " (LoRA r=" + std::to_string(e.lora->rank) + " adapters)";
  } else {
    s += ", inference";
  }
  if (r.quantize) s += ", weights " + storage_format(*r.quantize).name;
  if (r.activation_bytes_per_row || r.seq || !r.model.mlp_widths.empty())
    s += ", batch " + group_thousands(r.batch);
  if (r.seq) s += " x seq " + group_thousands(r.seq);
  return s;
}

json fit_row_json(const FitRow& r) {
  return {{"gpu", r.gpu.id},
          {"name", r.gpu.name},
          {"memory_bytes", r.memory_bytes},
          {"required_bytes", r.required_bytes},
          {"spare_bytes", r.spare_bytes},
          {"verdict", verdict_name(r.verdict)},
          {"warnings", fit_warning_texts(r.warnings, r.gpu)}};
}

json estimate_json(const Plan& plan, const Estimate& e, const std::vector<FitRow>& fit) {
  const EstimateRequest& r = plan.request;
  const LedgerDetail ledger = activation_ledger_detail(r);
  json breakdown = json::object();
  json formats = json::object();
  for (const Term& t : e.terms) {
    if (!e.has(t.kind)) continue;
    breakdown[term_key(t.kind)] = t.bytes;
    formats[term_key(t.kind)] = term_format(t, r);
  }
  json fits = json::array();
  for (const FitRow& f : fit) fits.push_back(fit_row_json(f));
  json model = {{"id", r.model.id},
                {"name", r.model.name},
                {"parameters", r.model.parameters},
                {"trainable_parameters", e.trainable_parameters},
                {"tensors", r.model.tensors ? json(r.model.tensors) : json(nullptr)},
                {"source", r.model.source}};
  if (e.lora)  // the trainable parameters are the LoRA adapters
    model["lora"] = {{"rank", e.lora->rank},
                     {"targets", lora_target_names(*e.lora)},
                     {"matrices", e.lora->matrices},
                     {"parameters", e.lora->parameters}};
  json doc = {{"schema", "memplan.estimate/1"},
              {"inputs", plan.inputs},
              {"model", model},
              {"breakdown", breakdown},
              {"formats", formats},
              {"total_bytes", e.total_bytes()},
              {"required_bytes", e.required_bytes()},
              {"fit", fits},
              {"explain", arithmetic(e, r)},
              {"assumptions", assumptions(e, r, ledger)}};
  if (!plan.targets.device_notes.empty()) doc["device_notes"] = plan.targets.device_notes;
  if (e.sharded) {
    doc["layout"] = layout_json(*e.sharded);
    doc["ranks"] = doc["layout"]["ranks"];
    doc["host_bytes"] = e.sharded->host_bytes_per_node;
    doc["host_pinned_bytes"] = e.sharded->host_pinned_bytes_per_node;
  }
  if (!ledger.rows.empty()) {
    json rows = json::array();
    for (const LedgerRow& row : ledger.rows)
      rows.push_back(
          {{"name", row.name}, {"shape", row.shape}, {"format", row.format}, {"bytes", row.bytes}});
    doc["layer_ledger"] = rows;
  }
  return doc;
}

std::string render_fit_table(const std::vector<FitRow>& fit, const std::vector<std::string>& device_notes,
                             const OutputOptions& o) {
  std::string out;
  if (!fit.empty()) {
    TextTable t({{"gpu", Align::left},
                 {"memory", Align::right},
                 {"required", Align::right},
                 {"spare", Align::right},
                 {"verdict", Align::left}});
    for (const FitRow& r : fit)
      t.add_row({r.gpu.id, format_bytes(r.memory_bytes, o.units), format_bytes(r.required_bytes, o.units),
                 format_signed_bytes(r.spare_bytes, o.units),
                 verdict_cell(r, o.color && o.format == Format::table)});
    out += o.format == Format::markdown ? t.render_markdown() : t.render();
  }
  std::string notes;
  for (const FitRow& r : fit)
    for (const std::string& w : fit_warning_texts(r.warnings, r.gpu))
      notes += "  ! " + r.gpu.id + ": " + w + "\n";
  for (const std::string& n : device_notes) notes += "  ! " + n + "\n";
  if (!notes.empty()) out += notes;
  return out;
}

std::string render_estimate(const Plan& plan, const Estimate& e, const std::vector<FitRow>& fit,
                            const OutputOptions& o) {
  const EstimateRequest& r = plan.request;
  switch (o.format) {
    case Format::json:
      return estimate_json(plan, e, fit).dump(2) + "\n";
    case Format::csv:
      return csv(e, r, fit);
    case Format::table:
    case Format::markdown:
      break;
  }
  if (o.quiet) return format_bytes(e.required_bytes(), o.units) + "\n";
  const bool md = o.format == Format::markdown;
  std::string out = (md ? "**memplan estimate**: " : "memplan estimate: ") + describe_model(r, e) + "\n\n";
  out += breakdown_table(e, r, o);
  if (e.sharded) out += ranks_text(*e.sharded, o);
  out += "\n";
  std::string memory_note =
      "memory = what a process can allocate: NVML total minus the driver-reserved share where known";
  out += render_fit_table(fit, plan.targets.device_notes, o);
  if (!fit.empty())
    out += (md ? "\n" : "  ") + memory_note + "; overhead " +
           format_bytes(e.bytes(TermKind::overhead), o.units) +
           " for the CUDA context and workspaces (--overhead)\n";
  if (o.explain) {
    const LedgerDetail ledger = activation_ledger_detail(r);
    out += explain_text(e, r, ledger, o);
    out += assumptions_text(e, r, ledger);
  }
  return out;
}

}  // namespace memplan::cli
