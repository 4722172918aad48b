#pragma once
// The seam between the estimate and the activation models: what the forward pass keeps for
// backward (training) or the KV cache and working buffer (inference), for one request.

#include <cstdint>
#include <string>
#include <vector>

#include <memplan/estimate.hpp>

namespace memplan {

struct ActivationTerms {
  Term activations;  // key "activations"
  Term kv_cache;     // key "kv_cache" (inference)
  std::vector<LedgerRow> layer_ledger;
  std::string ledger_title;
  std::vector<std::string> assumptions;
};

ActivationTerms activation_terms(const EstimateRequest& request);

}  // namespace memplan
