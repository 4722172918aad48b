#pragma once
// Words the fit warnings of the core (FitWarning: a code and its fields) for every command that
// shows them: fit, estimate, max-batch, advise.

#include <string>
#include <vector>

#include <memplan/fit.hpp>
#include <memplan/gpu.hpp>

namespace memplan::cli {

// "amp-bf16: bf16 needs compute capability 8.0 (Ampere) or newer; this card is 7.5: ...; use ..."
std::string fit_warning_text(const FitWarning& w, const GpuSpec& gpu);

// Each warning of `warnings` on `gpu`, worded.
std::vector<std::string> fit_warning_texts(const std::vector<FitWarning>& warnings, const GpuSpec& gpu);

// What to use instead: "amp-fp16 with a GradScaler (torch.cuda.amp.GradScaler)".
std::string substitute_text(Substitute use);

}  // namespace memplan::cli
