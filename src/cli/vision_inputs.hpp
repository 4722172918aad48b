#pragma once
// --images and --image-size: the language-model tokens of the images of a vision-language model
// join the sequence, so activations and the KV cache count them.

#include <nlohmann/json.hpp>

#include <memplan/request.hpp>
#include "cli/options.hpp"

namespace memplan::cli {

// r.seq += images x model.image_tokens (with a note saying so); Error on a text-only model.
void add_image_tokens(const PlanValues& v, EstimateRequest& r);

// The JSON "inputs" echo: seq as given (the image tokens are derived again when read back),
// images and image_size.
void echo_image_inputs(const PlanValues& v, const EstimateRequest& r, nlohmann::json& inputs);

}  // namespace memplan::cli
