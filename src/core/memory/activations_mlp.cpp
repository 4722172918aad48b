// Activations of a multilayer perceptron: Linear layers with ReLU between them.
//
// What autograd keeps (torch, checked against tests/data/torch_cpu_reference.json):
//   - each Linear keeps its input; each ReLU keeps its output, which is the next Linear's input:
//     one storage per hidden width, in the format the recipe produces;
//   - the first Linear's input is the user's batch, not an activation - except under autocast,
//     where the Linear keeps a half-precision copy of it;
//   - the last Linear's output is not kept (the loss keeps its own tensors).
// Under autocast each Linear whose input requires grad also keeps a half copy of its weight:
// batch independent (fixed_bytes). The first layer's does not (its input needs no gradient).

#include <memplan/error.hpp>
#include "core/base/checked.hpp"
#include "core/memory/activations.hpp"

#include "core/memory/activation_ledger.hpp"

namespace memplan {

using detail::Entries;
using detail::Fmt;

ActivationLedger mlp_activations(const std::vector<uint64_t>& widths, const ActivationOptions& opts) {
  if (widths.size() < 2)
    throw Error(Field::mlp, "needs at least two widths (input and output), e.g. 784,512,10");
  for (uint64_t w : widths)
    if (w == 0) throw Error(Field::mlp, "a layer width is 0 (expected positive widths, e.g. 784,512,10)");

  const Fmt act{opts.act_format, opts.act_cost};
  Entries entries;
  entries.record = opts.record;
  if (opts.autocast)
    detail::add_entry(
        entries, [&] { return "input cast to " + act.name + " (first Linear input)"; }, {widths[0]}, act);
  for (size_t i = 1; i + 1 < widths.size(); ++i)
    detail::add_entry(
        entries,
        [&] { return "ReLU " + std::to_string(i) + " output (Linear " + std::to_string(i + 1) + " input)"; },
        {widths[i]}, act);

  ActivationLedger ledger;
  ledger.layers = 0;
  ledger.saved_bytes_per_sample = detail::per_sample_bytes(entries, Role::saved);
  ledger.bytes_per_sample = ledger.saved_bytes_per_sample;
  ledger.total_bytes = checked_mul(opts.batch, ledger.bytes_per_sample, "activation bytes");
  ledger.outside_layers = detail::to_rows(entries, opts.batch);
  // Cross-entropy reads the last Linear's output in fp32 (autocast runs it in fp32).
  const bool fp32_loss = opts.autocast || opts.act_cost == ElementCost{4, 1};
  ledger.loss_input_bytes_per_sample =
      bytes_for(widths.back(), fp32_loss ? ElementCost{4, 1} : opts.act_cost);
  if (opts.autocast) {
    uint64_t weights = 0;  // every weight matrix except the first layer's
    for (size_t i = 1; i + 1 < widths.size(); ++i)
      weights = checked_add(weights, checked_mul(widths[i], widths[i + 1], "weights"), "weights");
    ledger.fixed_bytes = bytes_for(weights, act.cost, "autocast weight copies");
    ledger.notes.push_back("autocast keeps a " + act.name +
                           " copy of every weight matrix but the first layer's for backward: "
                           "batch independent (fixed_bytes)");
  }
  ledger.notes.push_back(
      "each Linear keeps its input and each ReLU its output (the same storage); "
      "the batch itself and the loss's tensors are not counted");
  if (opts.checkpointing != Checkpointing::none)
    ledger.notes.push_back("checkpointing is not modelled for MLPs: every activation is kept");
  return ledger;
}

}  // namespace memplan
