#pragma once
// --framework's profile (framework_profile.hpp) applied to the planning options: each rule of the
// profile fills a value the user did not give, and says so in the model's notes ("--framework
// torchtune: ..."), naming the code it comes from and the flag that overrides it.

#include <map>
#include <string>

#include <memplan/request.hpp>

#include "cli/options.hpp"

namespace memplan::cli {

// The values with the profile of v.framework filling what `given` (the option keys given) lacks:
// the loss (causal LMs), the LoRA adapters' format, dropout and targets (with --lora), the loop's
// keeping of the logits and the checkpointing (training). Appends a note per rule used to `notes`.
PlanValues with_profile(const PlanValues& v, const std::map<std::string, std::string>& given,
                        const ModelSpec& model, std::vector<std::string>& notes);

// The profile's optimizer loop where --optimizer-loop is not given (training with torch's
// Adam/AdamW); r.torch and r.optimizer must be resolved.
void apply_profile_runtime(const PlanValues& v, EstimateRequest& r);

}  // namespace memplan::cli
