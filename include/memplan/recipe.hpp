#pragma once
// Precision recipes: which format each of the four terms is kept in.
// fp32/fp16/bf16/N bytes: everything in one format (the lesson's model).
// amp-*: torch.autocast, fp32 weights/gradients/optimizer state, half activations.
// mixed-*: master-weight mixed precision (DeepSpeed/Megatron), half weights and gradients,
//          fp32 master copy and fp32 optimizer state.

#include <string>
#include <string_view>
#include <vector>

#include <memplan/storage_format.hpp>

namespace memplan {

struct TermFormat {
  std::string name;  // "fp32", "bf16", "2 B"
  ElementCost cost;
};

struct Recipe {
  std::string name;  // as given: "amp-bf16", "fp16", "2"
  TermFormat weights;
  TermFormat gradients;
  TermFormat master;            // cost 0 when there is no master copy
  TermFormat optimizer_state;   // format of each optimizer-state copy
  TermFormat activations;       // format the forward pass produces
  std::string hardware_format;  // "bf16", "fp16", "fp8" or "" : what the card must run natively
  bool loss_scaler = false;     // fp16 training needs torch.amp.GradScaler
  bool autocast = false;        // amp-*: weights fp32, matmuls in half
  std::string description;

  bool has_master() const { return master.cost.num != 0; }
};

// Parses a recipe name or a bare number of bytes per number ("2" -> every term 2 bytes).
Recipe parse_recipe(std::string_view subject, std::string_view text);

// The recipe names, for help and "did you mean".
std::vector<std::string> recipe_names();

}  // namespace memplan
