#include <fmt/format.h>

#include <memplan/estimate.hpp>

#include <cmath>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"
#include "core/memory/activation_term.hpp"
#include "core/memory/factored_state.hpp"
#include "core/parallel/sharded_estimate.hpp"

namespace memplan {
namespace {

std::string cost_text(ElementCost c) {
  if (c.den == 1) return std::to_string(c.num) + " B";
  return fmt::format("{:.6g} B", c.bytes());
}

// "7,000,000,000 x 4 B (fp32) = 28,000,000,000 B (26.1 GiB)"
std::string product_line(const std::string& what, uint64_t n, const TermFormat& f, uint64_t bytes) {
  return what + " = " + group_thousands(n) + " x " + cost_text(f.cost) + " (" + f.name +
         ") = " + group_thousands(bytes) + " B (" + format_bytes(bytes, Units::gib) + ")";
}

uint64_t trainable_count(uint64_t p, double share) {
  if (share >= 1.0) return p;
  const long double t = static_cast<long double>(p) * static_cast<long double>(share);
  return static_cast<uint64_t>(std::llround(t));
}

Term parameters_term(const EstimateRequest& r, uint64_t trainable) {
  const uint64_t p = r.model.parameters;
  Term t{"parameters", "Parameters", 0, r.recipe.weights.name, "1 copy", {}};
  if (r.stored_weights && r.mode == Mode::infer && r.model.weight_bytes) {
    t.bytes = r.model.weight_bytes;
    t.format = r.model.weight_format.empty() ? "as stored" : r.model.weight_format + " (as stored)";
    t.arithmetic.push_back("parameters = " + group_thousands(t.bytes) +
                           " B, the weights' stored bytes read from " + r.model.source);
    return t;
  }
  if (r.quantize) {
    const StorageFormat& q = storage_format(*r.quantize);
    const TermFormat qf{q.name, q.cost};
    const uint64_t frozen = r.mode == Mode::infer ? p : p - trainable;
    const uint64_t frozen_bytes = bytes_for(frozen, q.cost, "parameter bytes");
    t.arithmetic.push_back(product_line("frozen weights", frozen, qf, frozen_bytes) + " [" + q.description +
                           "]");
    t.bytes = frozen_bytes;
    t.format = q.name;
    if (r.mode == Mode::train && trainable) {
      const uint64_t tb = bytes_for(trainable, r.recipe.weights.cost, "parameter bytes");
      t.arithmetic.push_back(product_line("trainable weights", trainable, r.recipe.weights, tb));
      t.bytes = checked_add(t.bytes, tb, "parameter bytes");
      t.format = q.name + " frozen + " + r.recipe.weights.name;
    }
    return t;
  }
  t.bytes = bytes_for(p, r.recipe.weights.cost, "parameter bytes");
  t.arithmetic.push_back(product_line("parameters", p, r.recipe.weights, t.bytes));
  return t;
}

Term gradients_term(const EstimateRequest& r, uint64_t trainable) {
  Term t{"gradients", "Gradients", 0, r.recipe.gradients.name, "1 per trainable parameter", {}};
  if (r.mode == Mode::infer) {
    t.format = "-";
    t.detail = "none (inference)";
    return t;
  }
  // Master-weight recipes keep the gradients as the engine does: half (16 B per parameter in
  // all), an fp32 buffer (18 B, Megatron's bf16 main_grad) or half plus an fp32 copy (20 B).
  const bool master = r.recipe.has_master();
  const TermFormat fp32{"fp32", {4, 1}};
  const TermFormat& grads = master && r.grad_format == GradFormat::fp32 ? fp32 : r.recipe.gradients;
  t.format = grads.name;
  t.bytes = bytes_for(trainable, grads.cost, "gradient bytes");
  t.arithmetic.push_back(product_line("gradients", trainable, grads, t.bytes));
  if (master && r.grad_format == GradFormat::half_and_fp32) {
    const uint64_t copy = bytes_for(trainable, fp32.cost, "gradient bytes");
    t.arithmetic.push_back(product_line("fp32 gradient copy for the step", trainable, fp32, copy));
    t.bytes = checked_add(t.bytes, copy, "gradient bytes");
    t.format = grads.name + " + fp32 copy";
  }
  return t;
}

// trainable_tensors: the trainable parameter tensors when known apart from the model's (LoRA's A
// and B per adapted matrix), else 0.
Term optimizer_term(const EstimateRequest& r, uint64_t trainable, uint64_t trainable_tensors,
                    std::vector<std::string>& assumptions) {
  const Optimizer& o = r.optimizer;
  Term t{"optimizer_state", "Optimizer state", 0, "-", "", {}};
  if (r.mode == Mode::infer) {
    t.detail = "none (inference)";
    return t;
  }
  std::string format;
  if (r.recipe.has_master()) {
    const uint64_t mb = bytes_for(trainable, r.recipe.master.cost, "optimizer state bytes");
    t.arithmetic.push_back(product_line("master weights", trainable, r.recipe.master, mb));
    t.bytes = mb;
    format = r.recipe.master.name + " master";
  }
  switch (o.kind) {
    case StateKind::copies: {
      if (o.copies) {
        const uint64_t n = checked_mul(trainable, o.copies, "optimizer state bytes");
        const uint64_t b = bytes_for(n, r.recipe.optimizer_state.cost, "optimizer state bytes");
        t.arithmetic.push_back(
            product_line(o.name + " state", trainable, r.recipe.optimizer_state, b / o.copies) + " x " +
            std::to_string(o.copies) + " copies = " + group_thousands(b) + " B");
        t.bytes = checked_add(t.bytes, b, "optimizer state bytes");
        format +=
            (format.empty() ? "" : " + ") + std::to_string(o.copies) + " x " + r.recipe.optimizer_state.name;
      }
      break;
    }
    case StateKind::blockwise8bit: {
      const uint64_t n = checked_mul(trainable, o.copies, "optimizer state bytes");
      const uint64_t b = bytes_for(n, k_blockwise8bit_cost, "optimizer state bytes");
      t.arithmetic.push_back(o.name + " state = " + group_thousands(trainable) + " x " +
                             std::to_string(o.copies) +
                             " x (1 B + 4 B absmax / 256) = " + group_thousands(b) + " B");
      t.bytes = checked_add(t.bytes, b, "optimizer state bytes");
      format += (format.empty() ? "" : " + ") + std::string("2 x int8 (blockwise)");
      assumptions.push_back(
          "adamw-8bit: bitsandbytes blockwise quantisation, 256-element blocks; tensors under 4096 elements "
          "stay 32-bit (not modelled)");
      break;
    }
    case StateKind::factored: {
      FactoredState fs = factored_state_elements(r.model);
      uint64_t elements = trainable == r.model.parameters
                              ? fs.elements
                              : trainable_count(fs.elements, static_cast<double>(trainable) /
                                                                 static_cast<double>(r.model.parameters));
      const uint64_t b = bytes_for(elements, r.recipe.optimizer_state.cost, "optimizer state bytes");
      t.arithmetic.push_back("adafactor state = " + group_thousands(elements) + " numbers x " +
                             cost_text(r.recipe.optimizer_state.cost) + " = " + group_thousands(b) + " B");
      t.bytes = checked_add(t.bytes, b, "optimizer state bytes");
      format += (format.empty() ? "" : " + ") + std::string("factored ") + r.recipe.optimizer_state.name;
      assumptions.push_back("adafactor: " + fs.how);
      break;
    }
  }
  if (o.step_per_tensor) {
    if (trainable_tensors) {
      const uint64_t b = checked_mul(trainable_tensors, 4, "optimizer state bytes");
      t.arithmetic.push_back("step counters = " + group_thousands(trainable_tensors) +
                             " adapter tensors (A and B per matrix) x 4 B (float32) = " + group_thousands(b) +
                             " B");
      t.bytes = checked_add(t.bytes, b, "optimizer state bytes");
    } else if (r.model.tensors && trainable == r.model.parameters) {
      const uint64_t b = checked_mul(r.model.tensors, 4, "optimizer state bytes");
      t.arithmetic.push_back("step counters = " + group_thousands(r.model.tensors) +
                             " tensors x 4 B (float32) = " + group_thousands(b) + " B");
      t.bytes = checked_add(t.bytes, b, "optimizer state bytes");
    } else if (!r.model.tensors) {
      assumptions.push_back(
          o.name +
          "'s per-tensor step counters (4 B each) not counted: the tensor count is unknown (--tensors N)");
    } else {
      assumptions.push_back(o.name +
                            "'s step counters of the trainable tensors not counted: their number is unknown");
    }
  }
  t.format = format.empty() ? "-" : format;
  t.detail = o.description;
  return t;
}

// Replaces the single-GPU terms by the most-loaded GPU of the layout.
void apply_layout(Estimate& e) {
  const EstimateRequest& r = e.request;
  if (r.mode == Mode::infer)
    throw Error(Field::gpus, "multi-GPU layouts are planned for training; for inference give one GPU");
  const ShardingResult res = estimate_sharded(sharding_request_for(r, e));
  const std::string where = " (" + res.most_loaded + " of " + std::to_string(res.layout.gpus) + " GPUs)";
  for (Term& t : e.terms) {
    uint64_t b = t.bytes;
    if (t.key == "parameters") b = res.gpu.parameters;
    if (t.key == "gradients") b = res.gpu.gradients;
    if (t.key == "optimizer_state") b = res.gpu.optimizer_state;
    if (t.key == "activations") b = res.gpu.activations;
    if (b != t.bytes && t.key != "kv_cache") {
      t.arithmetic.push_back(t.key + " on the most-loaded GPU = " + group_thousands(b) +
                             " B (one GPU would hold " + group_thousands(t.bytes) + " B)");
      t.detail += where;
    }
    t.bytes = b;
  }
  Term buffers{"buffers",
               "Gathered buffers",
               res.gpu.buffers,
               "-",
               "layers gathered by ZeRO-3/FSDP, unsharded copies",
               res.explain};
  e.terms.push_back(buffers);
  e.sharded = res;
  if (!largest_layer_parameters(r) && sharding_level(res.layout.sharding) >= 3)
    e.assumptions.push_back(
        "the largest layer is unknown: give --largest-layer for ZeRO-3/FSDP's gathered buffers");
}

}  // namespace

uint64_t Estimate::bytes(const std::string& key) const {
  for (const Term& t : terms)
    if (t.key == key) return t.bytes;
  return 0;
}

uint64_t Estimate::total_bytes() const {
  uint64_t sum = 0;
  for (const Term& t : terms)
    if (t.key != "overhead") sum = checked_add(sum, t.bytes, "total bytes");
  return sum;
}

uint64_t Estimate::required_bytes() const {
  return checked_add(total_bytes(), bytes("overhead"), "required bytes");
}

Estimate estimate(const EstimateRequest& r) {
  if (r.model.parameters == 0) throw Error(Field::params, "the model has no parameters");
  if (!(r.trainable > 0.0 && r.trainable <= 1.0)) throw Error(Field::trainable, "must be in (0, 1]");
  if (r.batch == 0) throw Error(Field::batch, "\"0\" is not a batch size (expected at least 1)");
  Estimate e;
  e.request = r;
  e.trainable_parameters = r.mode == Mode::infer ? 0 : trainable_count(r.model.parameters, r.trainable);
  uint64_t trainable_tensors = 0;
  if (r.lora) {  // exact: the adapters, not a rounded share
    e.lora = lora_adapters(r.model, *r.lora);
    if (e.lora->parameters >= r.model.parameters)
      throw Error(Field::lora, "the adapters (" + group_thousands(e.lora->parameters) +
                                   ") are not part of the model's parameters (" +
                                   group_thousands(r.model.parameters) + ")");
    if (r.mode == Mode::train) e.trainable_parameters = e.lora->parameters;
    trainable_tensors = checked_mul(2, e.lora->matrices, "tensors");
  }
  if (r.mode == Mode::train && e.trainable_parameters == 0)
    throw Error(Field::trainable, "leaves no trainable parameter of " + group_thousands(r.model.parameters));

  e.terms.push_back(parameters_term(r, e.trainable_parameters));
  if (e.lora)
    e.terms.back().arithmetic.insert(
        e.terms.back().arithmetic.begin(),
        e.lora->arithmetic + " (parameters = " + group_thousands(r.model.parameters - e.lora->parameters) +
            " base + " + group_thousands(e.lora->parameters) +
            " adapters = " + group_thousands(r.model.parameters) + ")");
  e.terms.push_back(gradients_term(r, e.trainable_parameters));
  e.terms.push_back(optimizer_term(r, e.trainable_parameters, trainable_tensors, e.assumptions));
  ActivationTerms act = activation_terms(r);
  e.terms.push_back(act.activations);
  e.terms.push_back(act.kv_cache);
  e.layer_ledger = std::move(act.layer_ledger);
  e.ledger_title = std::move(act.ledger_title);
  e.assumptions.insert(e.assumptions.end(), act.assumptions.begin(), act.assumptions.end());

  if (r.parallel) apply_layout(e);

  Term overhead{"overhead", "Overhead", r.overhead_bytes, "-", "CUDA context + library workspaces", {}};
  overhead.arithmetic.push_back("per-process overhead = " + group_thousands(r.overhead_bytes) + " B (" +
                                format_bytes(r.overhead_bytes, Units::gib) +
                                (r.overhead_bytes == k_default_overhead_bytes
                                     ? ", the default; --overhead to change)"
                                     : ", --overhead)"));
  e.terms.push_back(overhead);

  if (e.lora && r.mode == Mode::train)
    e.assumptions.push_back(
        "LoRA r=" + std::to_string(e.lora->rank) + " on " + e.lora->targets + ": " +
        group_thousands(e.trainable_parameters) + " trainable adapter parameters (in the weights' format " +
        r.recipe.weights.name + "), gradients and optimizer state for them only; base weights frozen" +
        (r.quantize ? " in " + storage_format(*r.quantize).name : "") +
        (r.quantize == StorageFormatId::nf4 || r.quantize == StorageFormatId::nf4_dq ? " (QLoRA)" : ""));
  else if (r.mode == Mode::train && r.trainable < 1.0)
    e.assumptions.push_back("trainable share " + std::to_string(r.trainable) +
                            ": gradients and optimizer state for " + group_thousands(e.trainable_parameters) +
                            " parameters only; frozen weights still held");
  if (r.recipe.loss_scaler && r.mode == Mode::train)
    e.assumptions.push_back(
        "fp16 training needs loss scaling (torch.amp.GradScaler); its state is a few scalars");
  e.assumptions.push_back(
      "GiB = 2^30 bytes; allocator rounding and fragmentation (typically 5-15%) are not included");
  return e;
}

}  // namespace memplan
