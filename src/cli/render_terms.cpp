// Words for the estimate's plain values: term labels, formats and details, the --explain
// arithmetic lines, all built from numbers and codes (the assumption sentences: render_assumptions.cpp).
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
    case Counted::unquantised_experts:
      return "MoE experts and router (transformers v5 fuses the experts into 3-D parameters, not nn.Linear "
             "layers: bitsandbytes leaves them in the weight format, bitsandbytes#1849)";
    case Counted::unquantised_layers:
      return "decoder layers (transformers >= 5.5 converts a module only when its type is nn.Linear itself: "
             "Falcon's FalconLinear layers stay in the weight format)";
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
    case KvBuffer::all_logits:
      return "logits of every position (--logits all) and the final norm's output";
    case KvBuffer::none:
      break;
  }
  return "";
}

// What the inference working buffer adds up: the hidden states (`stream`, as the caller words
// them) and the largest buffer, or with --logits all the final norm's output and the logits.
std::string working_buffer_parts(const Term& a, const std::string& stream, bool all_logits) {
  const KvBuffer k = a.line_count ? static_cast<KvBuffer>(a.lines[0].n[0]) : KvBuffer::none;
  if (k == KvBuffer::all_logits)
    return "the final norm's output (tokens of one pass x hidden) + every position's logits (batch x seq x "
           "vocab, --logits all)";
  if (all_logits)  // transformers' forward: inputs_embeds, the layer's input, its residual, the norm output
    return "hidden states (4 x tokens of one pass x hidden: a transformers forward keeps inputs_embeds and "
           "the layer's input) + " +
           std::string(kv_buffer_name(k));
  return "hidden states (" + stream + ") + " + kv_buffer_name(k);
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
      if (l.n[0] > 0 && l.n[0] < l.bytes)
        return "+ autocast's half-precision weight copies kept for backward = " + group_thousands(l.bytes) +
               " B (independent of batch: " + group_thousands(l.n[0]) +
               " B of the layer rebuilt in backward, made then, + " + group_thousands(l.bytes - l.n[0]) +
               " B kept from the forward)";
      return "+ autocast's half-precision weight copies kept for backward = " + group_thousands(l.bytes) +
             " B (independent of batch)";
    case LineCode::mlp_working_buffer:
      return "working buffer = batch " + group_thousands(l.n[0]) + " x 2 x " + group_thousands(l.n[1]) +
             " x " + format_name(l.format, r) + " = " + group_thousands(l.bytes) + " B";
    case LineCode::kv_cache: {
      const Term& a = e.term(TermKind::activations);
      return "KV cache = 2 x " + std::to_string(l.n[0]) + " layers x " + std::to_string(l.n[1]) +
             " kv heads x " + std::to_string(l.n[2]) + " head dim x " + std::to_string(l.n[3]) +
             " tokens x " + std::to_string(t.batch) + " batch x " + format_name(l.format, r) + " = " +
             std::to_string(l.bytes) + " B; working buffer = " +
             working_buffer_parts(a, "2 x tokens of one pass x hidden", r.all_logits) + " = " +
             std::to_string(a.lines[0].bytes) + " B";
    }
    case LineCode::kv_cache_layers:
    case LineCode::kv_cache_latent: {
      const Term& a = e.term(TermKind::activations);
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
             std::to_string(l.bytes) +
             " B; working buffer = " + working_buffer_parts(a, "2 x seq x hidden", r.all_logits) + " = " +
             std::to_string(a.lines[0].bytes) + " B";
    }
    case LineCode::kv_cache_cross: {
      const Term& a = e.term(TermKind::activations);
      return "KV cache = " + std::to_string(l.n[0]) + " elements per token (2 x kv heads x head dim) x (" +
             std::to_string(l.n[1]) + " self-attention layers x " + std::to_string(t.per_sample) +
             " text tokens + " + std::to_string(l.n[2]) + " cross-attention layers x " +
             std::to_string(l.n[3]) + " image tokens) x " + std::to_string(t.batch) + " batch x " +
             format_name(l.format, r) + " = " + std::to_string(l.bytes) +
             " B; working buffer = " + working_buffer_parts(a, "2 x seq x hidden", r.all_logits) + " = " +
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
    case LineCode::paged_state:
      return "paged: the state of " + group_thousands(l.n[0]) + " numbers in " + group_thousands(l.n[1]) +
             " tensors of 100,000 or more = " + group_thousands(l.bytes) +
             " B in CUDA unified memory (bitsandbytes cudaMallocManaged), not in this term: torch does not "
             "count it and the driver pages it to host memory under pressure";
    case LineCode::vision_tower: {
      const std::string images =
          "batch " + group_thousands(t.batch) + " x " + group_thousands(l.n[0]) + " images";
      if (l.n[1])
        return "+ vision tower (trained, --train-vision) and projector = " + images + " x (" +
               group_thousands(l.n[1]) + " B tower + " + group_thousands(l.n[2]) +
               " B projector per image) = " + group_thousands(l.bytes) + " B";
      return "+ vision projector = " + images + " x " + group_thousands(l.n[2]) +
             " B per image = " + group_thousands(l.bytes) +
             " B; the frozen vision tower keeps nothing (its largest layer's " + group_thousands(l.n[3]) +
             " B per image of working memory is freed before the language model runs)";
    }
    case LineCode::cross_attention_layers:
      return "+ cross-attention layers = batch " + group_thousands(t.batch) + " x (" +
             group_thousands(l.n[0]) + " layers x " + group_thousands(l.n[1]) + " B + " +
             group_thousands(l.n[2]) + " B of shared inputs" +
             (l.n[3]
                  ? " + " + group_thousands(l.n[3]) + " B of a rebuilt layer beyond a self-attention layer's"
                  : std::string()) +
             ") per sample = " + group_thousands(l.bytes) + " B (they run only with images)";
    case LineCode::vision_patches:
      return "+ vision merger = batch " + group_thousands(t.batch) + " x " + group_thousands(l.n[0]) +
             " images x " + group_thousands(l.n[2]) + " B per image = " + group_thousands(l.bytes) +
             " B; the frozen vision tower keeps nothing (over the " + group_thousands(l.n[1]) +
             " patches of a sample, one sequence, its largest working set of " + group_thousands(l.n[3]) +
             " B is freed before the language model runs)";
    case LineCode::most_loaded:
      return std::string(term_key(t.kind)) + " on the most-loaded GPU = " + group_thousands(l.bytes) +
             " B (one GPU would hold " + group_thousands(l.n[0]) + " B)";
    case LineCode::overhead:
      return "per-process overhead = " + group_thousands(l.bytes) + " B (" +
             format_bytes(l.bytes, Units::gib) +
             (l.n[0] ? ", the largest CUDA context predicted for the GPUs compared; --overhead to set one)"
                     : ", --overhead)");
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
      return e.sharded && e.sharded->arithmetic.bucket_bytes ? "DDP buckets" : "Gathered buffers";
    case TermKind::overhead:
      return "Overhead";
  }
  return "";
}

namespace {

std::string optimizer_format(const EstimateRequest& r) {
  std::string format;
  // FSDP's optimizer steps on the fp32 flat parameter itself: no separate master copy.
  const bool fsdp = r.parallel && is_fsdp(r.parallel->sharding);
  if (r.recipe.has_master() && !fsdp) format = r.recipe.master.name + " master";
  const std::string plus = format.empty() ? "" : " + ";
  switch (r.optimizer.kind) {
    case StateKind::copies:
      if (r.optimizer.copies)
        format += plus + std::to_string(r.optimizer.copies) + " x " +
                  (r.fp32_lora_adapters() || r.optimizer.fp32_state ? "fp32" : r.recipe.optimizer_state.name);
      break;
    case StateKind::blockwise8bit:
      format += plus + "2 x int8 (blockwise)";
      break;
    case StateKind::factored:
      format += plus + "factored fp32";
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
      return t.format == FormatId::fp32 ? "fp32" : r.recipe.weights.name;
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
      if (e.sharded && e.sharded->arithmetic.bucket_bytes)
        return "DDP's gradient buckets (a copy of every gradient)";
      return "layers gathered by ZeRO-3/FSDP, unsharded copies";
    case TermKind::overhead:
      return r.overhead_given ? "per-process overhead (--overhead)" : "CUDA context (largest of the GPUs)";
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

}  // namespace memplan::cli
