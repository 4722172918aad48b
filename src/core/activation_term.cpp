#include <memplan/activation_term.hpp>

#include <memplan/checked.hpp>
#include <memplan/quantity.hpp>

namespace memplan {

ActivationTerms activation_terms(const EstimateRequest& r) {
  ActivationTerms a;
  a.activations = {"activations", "Activations", 0, "-", "", {}};
  a.kv_cache = {"kv_cache", "KV cache", 0, "-", "", {}};
  if (r.activation_bytes_per_row) {
    a.activations.bytes = checked_mul(r.batch, r.activation_bytes_per_row, "activation bytes");
    a.activations.format = "as measured";
    a.activations.detail = "batch " + group_thousands(r.batch) + " x " + group_thousands(r.activation_bytes_per_row) + " B/row";
    a.activations.arithmetic.push_back("activations = batch " + group_thousands(r.batch) + " x " +
                                       group_thousands(r.activation_bytes_per_row) + " B per row (--activation-bytes-per-row) = " +
                                       group_thousands(a.activations.bytes) + " B");
    if (r.mode == Mode::infer) a.activations.label = "Working activations";
    return a;
  }
  a.activations.detail = "not counted";
  a.assumptions.push_back("activations not counted: give --activation-bytes-per-row, --mlp or an architecture with --seq");
  return a;
}

}  // namespace memplan
