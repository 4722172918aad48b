#pragma once
// Block layout of known model families (config.json's model_type): pre/post-LN, parallel
// attention, fused q/k/v, final norm, biases, position embedding. The activation model needs
// these; config.json does not state them, the family's modelling code does.

#include <memplan/model.hpp>

namespace memplan {

// Sets arch's layout fields from arch.model_type ("gpt2", "llama", "bert", "gpt_neox", ...).
// Returns false (and leaves arch unchanged) for an unknown family: the defaults (pre-LN,
// separate q/k/v, rotary, final norm) then describe a LLaMA-like decoder.
bool apply_layout_defaults(TransformerArch& arch);

}  // namespace memplan
