#pragma once
// Words for the estimate's plain values (render_terms.cpp): what each term is called, its format
// and detail columns, the --explain arithmetic and the assumptions.

#include <string>
#include <vector>

#include <memplan/estimate.hpp>
#include <memplan/request.hpp>
#include "core/memory/activation_term.hpp"

namespace memplan::cli {

// "Parameters", "Optimizer state", ...
std::string term_label(const Estimate& e, const Term& t);

// The format column: "fp32", "bf16 + fp32 copy", "2 x fp32", "-".
std::string term_format(const Term& t, const EstimateRequest& r);

// The detail column: "1 copy", "batch 8 x 1,234 B/row", ...
std::string term_detail(const Estimate& e, const Term& t, const EstimateRequest& r);

// Every term's arithmetic, one line each, as --explain prints it.
std::vector<std::string> arithmetic(const Estimate& e, const EstimateRequest& r);

// What the numbers rest on, one sentence each.
std::vector<std::string> assumptions(const Estimate& e, const EstimateRequest& r, const LedgerDetail& ledger);

// The estimate's warnings about its inputs, shown without --explain too (the table's "note:" lines,
// the JSON's "warnings"): a --seq beyond the context the model was trained for.
std::vector<std::string> input_warnings(const Estimate& e);

}  // namespace memplan::cli
