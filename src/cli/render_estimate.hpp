#pragma once
// Renders an estimate and its fit table in each output format.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memplan/estimate.hpp>
#include <memplan/fit.hpp>

#include "cli/command.hpp"
#include "cli/plan_options.hpp"
#include "cli/verdict_fix.hpp"

namespace memplan::cli {

// The "memplan.estimate/1" document.
nlohmann::json estimate_json(const Plan& plan, const Estimate& e, const std::vector<FitRow>& fit,
                             const std::vector<std::optional<VerdictFix>>& fixes = {});

// One fit row as JSON: {"gpu", "name", "memory_bytes", "required_bytes", "spare_bytes", "verdict",
// "warnings"}.
nlohmann::json fit_row_json(const FitRow& row, const std::optional<VerdictFix>& fix = std::nullopt);

// The whole output of `memplan estimate` in the chosen format; `bars` (render_bars) follows the fit
// table in the table format.
std::string render_estimate(const Plan& plan, const Estimate& e, const std::vector<FitRow>& fit,
                            const OutputOptions& out, const std::string& bars = "",
                            const std::vector<std::optional<VerdictFix>>& fixes = {});

// A training run of a transformer without --seq: no activations are counted (the output says so).
bool no_sequence(const EstimateRequest& request);

// The fit table alone (table or markdown), with warnings and device notes after it.
std::string render_fit_table(const std::vector<FitRow>& fit, const std::vector<std::string>& device_notes,
                             const OutputOptions& out);

// "Required 13.5 GiB = total 13.0 GiB + overhead 512.0 MiB" style one-line summary of the model.
std::string describe_model(const EstimateRequest& request, const Estimate& e);

// "LoRA adapters (r=16 on q_proj,v_proj) = 32 attention blocks x (16 x (4096 + 4096) + ...) = 8,388,608
// trainable parameters"
std::string lora_arithmetic(const LoraAdapters& adapters);

}  // namespace memplan::cli
