#include "cli/render_timeline.hpp"

#include <algorithm>

#include <memplan/quantity.hpp>

#include "cli/text_table.hpp"

namespace memplan::cli {
namespace {

using Align = TextTable::Align;

std::string transient_text(const Transient& t) {
  switch (t.code) {
    case TransientCode::none:
      return "";
    case TransientCode::loss_gradients:
      return "cross-entropy's backward: the gradients of log-softmax and of its input, 2 x " +
             group_thousands(t.n[0]) + " B (the loss input's size) = " + group_thousands(t.bytes) + " B";
    case TransientCode::foreach_copy:
      return "foreach AdamW (torch >= 2 on CUDA, --optimizer-loop): sqrt(exp_avg_sq) of every trainable "
             "tensor at once, " +
             group_thousands(t.n[0]) + " x " + std::to_string(t.n[1]) + " B = " + group_thousands(t.bytes) +
             " B";
    case TransientCode::mlp_gradients:
      return "the last layer's backward: gradients of the MLP's inner tensors (3 for a gated MLP) and of the "
             "hidden state, " +
             group_thousands(t.n[0]) + " tokens x (" + group_thousands(t.n[1]) +
             " + hidden) = " + group_thousands(t.bytes) + " B";
    case TransientCode::mlp_gradients_dequant:
      return "the last layer's backward: gradients of the MLP's inner tensors and of the hidden state, " +
             group_thousands(t.n[0]) +
             " B, while the 4-bit down projection is dequantised for its input gradient (bitsandbytes' "
             "MatMul4Bit, torchao's LinearNF4), " +
             group_thousands(t.n[1]) + " x 2 B = " + group_thousands(t.bytes) + " B";
    case TransientCode::load_staging:
      return "one weight at a time put on the GPU in 16 bits and quantised there: the largest quantised "
             "weight's copy, " +
             group_thousands(t.n[0]) + " x " + std::to_string(t.n[1]) + " B = " + group_thousands(t.bytes) +
             " B, beside the weights loaded before it";
    case TransientCode::loss_and_dequant:
      return "cross-entropy's backward, 2 x " + group_thousands(t.n[0]) +
             " B, while bitsandbytes' 4-bit LM head dequantises its weight for the input gradient (an fp16 "
             "copy, cast to bf16: " +
             group_thousands(t.n[1]) + " x 4 B) = " + group_thousands(t.bytes) + " B";
    case TransientCode::per_tensor_copies:
      return "per-tensor AdamW (torch 1.13, foreach=False; --optimizer-loop): sqrt(exp_avg_sq) and its "
             "quotient for the largest tensor, 2 x " +
             group_thousands(t.n[0]) + " x " + std::to_string(t.n[1]) + " B = " + group_thousands(t.bytes) +
             " B";
    case TransientCode::hf_adamw_denom: {
      const uint64_t numbers = t.n[0] + t.n[1];
      return "transformers.AdamW, one tensor at a time: denom = exp_avg_sq.sqrt() of " +
             group_thousands(t.n[0]) + " numbers beside the previous tensor's (" + group_thousands(t.n[1]) +
             "), x " + std::to_string(numbers ? t.bytes / numbers : 0) + " B = " + group_thousands(t.bytes) +
             " B";
    }
    case TransientCode::autocast_weight_cache:
      return "autocast's weight cache: the checkpointed forward casts every layer's weights that require "
             "grad "
             "(LoRA: the adapters) to half and autocast keeps each cast until its region exits (after the "
             "loss), " +
             group_thousands(t.n[0]) + " layers x " + group_thousands(t.n[1]) +
             " B = " + group_thousands(t.bytes) + " B";
    case TransientCode::logprob_backward: {
      const uint64_t head = t.bytes - std::min(t.bytes, t.n[0] + t.n[1]);
      return "TRL's fused LM head's backward: its input's fp32 gradient (" + group_thousands(t.n[0]) +
             " B) and the tile it rebuilds the logits in, 4096 tokens x 32768 vocabulary (" +
             group_thousands(t.n[1]) + " B)" +
             (head ? ", the LM head's fp32 weight gradient (" + group_thousands(head) + " B)"
                   : std::string()) +
             " = " + group_thousands(t.bytes) + " B";
    }
    case TransientCode::adafactor_update: {
      const uint64_t k = t.n[0] ? (t.bytes / 4 - std::min(t.bytes / 4, t.n[1])) / t.n[0] : 0;
      return std::string("transformers' Adafactor, one tensor at a time: ") +
             (k == 4 ? "fp32 copies of its gradient and weight, " : "") +
             "grad**2 + eps and -update (or the factored product) beside update, " + std::to_string(k) +
             " x " + group_thousands(t.n[0]) + " numbers, + " + group_thousands(t.n[1]) +
             " (the previous tensor's update, or the row and column factors), x 4 B = " +
             group_thousands(t.bytes) + " B";
    }
  }
  return "";
}

const char* phase_words(Phase p) {
  switch (p) {
    case Phase::weights:
      return "weights loaded (optimizer state from earlier steps)";
    case Phase::forward:
      return "end of forward: saved activations";
    case Phase::loss:
      return "loss: + logits, their fp32 upcast, log-softmax";
    case Phase::backward:
      return "backward: the largest of its start and its end";
    case Phase::optimizer:
      return "optimizer step: gradients + temporaries";
    case Phase::zero_grad:
      return "zero_grad(set_to_none): gradients freed";
  }
  return "";
}

}  // namespace

std::string peak_detail(const StepTimeline& t) {
  if (t.peak_at_load) return std::string("peak of loading the weights (") + to_string(t.device) + ")";
  return std::string("peak of the step: ") + to_string(t.peak_phase) + " (" + to_string(t.device) + ")";
}

std::string timeline_text(const Estimate& e, const OutputOptions& o) {
  const StepTimeline& t = e.timeline;
  if (!t.present) return "";
  std::string out = "\nStep timeline (steady state, step 2 on; " + std::string(to_string(t.device)) +
                    "; allocated bytes at each phase's high point):\n";
  // A layout's buffers get a column only where there are any (DDP's buckets, gathered layers).
  const bool buffers = t.phases[0].buffers != 0;
  std::vector<std::pair<std::string, Align>> columns = {
      {"phase", Align::left},      {"weights", Align::right},     {"opt state", Align::right},
      {"gradients", Align::right}, {"activations", Align::right}, {"transient", Align::right},
      {"workspace", Align::right}};
  if (buffers) columns.push_back({"buffers", Align::right});
  columns.push_back({"allocated", Align::right});
  columns.push_back({"what", Align::left});
  TextTable table(columns);
  for (const PhasePoint& p : t.phases) {
    std::vector<std::string> row = {std::string(to_string(p.phase)) + (p.phase == t.peak_phase ? " *" : ""),
                                    group_thousands(p.weights),
                                    group_thousands(p.optimizer_state),
                                    group_thousands(p.gradients),
                                    group_thousands(p.activations),
                                    group_thousands(p.transient),
                                    group_thousands(p.workspace)};
    if (buffers) row.push_back(group_thousands(p.buffers));
    row.push_back(format_bytes(p.bytes, o.units));
    row.push_back(phase_words(p.phase));
    table.add_row(row);
  }
  out += o.format == Format::markdown ? table.render_markdown() : table.render();
  out +=
      "  peak = " + group_thousands(t.peak_bytes) + " B at " +
      (t.peak_at_load ? std::string("loading the weights") : std::string(to_string(t.peak_phase)) + " (*)") +
      "; step 1 (optimizer state allocated inside optimizer.step()): " +
      group_thousands(t.first_step_peak_bytes) + " B\n";
  if (t.load_peak_bytes) {
    out += "  loading (before step 1): " + group_thousands(t.load_peak_bytes) + " B at its high point; " +
           (t.load_transient.bytes ? transient_text(t.load_transient)
                                   : std::string("no weight is quantised: each is loaded as it stays")) +
           "\n";
    if (t.load_warmup_bytes)
      out += "  load warm-up: transformers' caching_allocator_warmup allocates " +
             group_thousands(t.load_warmup_bytes) +
             " B and frees it at once, so the allocator keeps that segment and splits the weights from it\n";
  }
  const std::string f = transient_text(t.forward_transient);
  if (!f.empty()) out += "  forward and loss transient: " + f + "\n";
  const std::string b = transient_text(t.backward_transient);
  if (!b.empty()) out += "  backward transient: " + b + "\n";
  const std::string opt = transient_text(t.optimizer_transient);
  out += "  optimizer transient: " + (opt.empty() ? std::string("none modelled for this optimizer") : opt) +
         "\n";
  if (t.phases[0].workspace)
    out += "  workspace: torch's cuBLAS workspaces, " + std::to_string(k_cublas_workspaces) + " x " +
           group_thousands(k_cublas_workspace_bytes) +
           " B (one per thread running matmuls: the forward's and autograd's; 32 MiB each on compute "
           "capability 9.0+, 8 MiB + 128 KiB before: the larger counted)\n";
  if (buffers)
    out +=
        "  buffers: the layout's " + group_thousands(t.phases[0].buffers) +
        " B (DDP's gradient buckets, made when the model is wrapped; ZeRO-3/FSDP's gathered layers), alive "
        "through the step\n";
  out += reserved_text(t, o);
  return out;
}

nlohmann::json reserved_json(const StepTimeline& t) {
  const ReservedPeak& r = t.reserved;
  if (!r.present) return nullptr;
  return {{"reserved_bytes", r.reserved_peak},
          {"allocated_bytes", r.allocated_peak},
          {"requested_bytes", r.requested_peak},
          {"segments", r.segments},
          {"tensors", r.tensors},
          {"steps", r.steps},
          {"phase", to_string(r.reserved_phase)},
          {"step", r.reserved_step},
          {"expandable_segments", r.expandable_segments}};
}

std::string reserved_text(const StepTimeline& t, const OutputOptions& o) {
  const ReservedPeak& r = t.reserved;
  if (!r.present) return "";
  const uint64_t rounding = r.allocated_peak - std::min(r.allocated_peak, r.requested_peak);
  const uint64_t cached = r.reserved_peak - std::min(r.reserved_peak, r.allocated_peak);
  std::string out = "  reserved (torch's caching allocator, steps 1-" + std::to_string(r.steps) +
                    " replayed as " + group_thousands(r.tensors) + " tensor allocations";
  out += r.expandable_segments ? ", expandable segments" : "";
  out += "): " + group_thousands(r.reserved_peak) + " B (" + format_bytes(r.reserved_peak, o.units) +
         ") = allocated peak " + group_thousands(r.requested_peak) + " B + " + group_thousands(rounding) +
         " B of 512-byte block rounding + " + group_thousands(cached) + " B cached in " +
         group_thousands(r.segments) + " segments but free at the peak (2 MiB / 20 MiB segments for small " +
         "requests, blocks not split when <= 1 MiB would remain, freed blocks that later requests do not " +
         "fit); reserved last grew " +
         (r.reserved_step == 0
              ? std::string("while loading the weights")
              : "in step " + std::to_string(r.reserved_step) + "'s " + to_string(r.reserved_phase)) +
         "\n";
  return out;
}

nlohmann::json timeline_json(const StepTimeline& t) {
  nlohmann::json rows = nlohmann::json::array();
  for (const PhasePoint& p : t.phases)
    rows.push_back({{"phase", to_string(p.phase)},
                    {"weights", p.weights},
                    {"optimizer_state", p.optimizer_state},
                    {"gradients", p.gradients},
                    {"activations", p.activations},
                    {"transient", p.transient},
                    {"workspace", p.workspace},
                    {"buffers", p.buffers},
                    {"bytes", p.bytes}});
  return rows;
}

}  // namespace memplan::cli
