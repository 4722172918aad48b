#include <memplan/optimizer.hpp>

#include <cctype>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/did_you_mean.hpp"

namespace memplan {
namespace {

struct Row {
  const char* name;
  uint64_t copies;
  StateKind kind;
  bool step;
  const char* description;
  bool paged = false;
  bool fp32_state = false;
  bool transformers_loop = false;
};

// Facts, not logic: one row per optimizer.
const Row k_table[] = {
    {"none", 0, StateKind::copies, false, "no optimizer (inference)"},
    {"sgd", 0, StateKind::copies, false, "plain SGD keeps no state"},
    {"sgd-momentum", 1, StateKind::copies, false, "SGD with momentum: one momentum buffer"},
    {"adam", 2, StateKind::copies, true, "Adam: exp_avg and exp_avg_sq"},
    {"adamw", 2, StateKind::copies, true, "AdamW: exp_avg and exp_avg_sq"},
    {"adamw-hf", 2, StateKind::copies, false,
     "transformers.AdamW (Trainer optim=adamw_hf): exp_avg and exp_avg_sq, one tensor at a time", false,
     false, true},
    {"adagrad", 1, StateKind::copies, false, "Adagrad: one sum of squares"},
    {"rmsprop", 1, StateKind::copies, false, "RMSprop: one square average"},
    {"rmsprop-momentum", 2, StateKind::copies, false,
     "RMSprop with momentum: square average and momentum buffer"},
    {"lion", 1, StateKind::copies, false, "Lion: one momentum buffer"},
    {"adamw-8bit", 2, StateKind::blockwise8bit, false,
     "bitsandbytes AdamW8bit: 2 states of 1 byte + fp32 absmax per 256-element block"},
    {"adafactor", 1, StateKind::factored, false,
     "Adafactor (no momentum): row and column second-moment statistics per matrix"},
    {"paged-adamw", 2, StateKind::copies, false,
     "bitsandbytes PagedAdamW: exp_avg and exp_avg_sq in float32, tensors of 1e5+ numbers in unified memory",
     true, true},
    {"paged-adamw-8bit", 2, StateKind::blockwise8bit, false,
     "bitsandbytes PagedAdamW8bit: 2 blockwise 8-bit states, tensors of 1e5+ numbers in unified memory", true,
     false},
};

}  // namespace

std::vector<std::string> optimizer_names() {
  std::vector<std::string> names;
  for (const Row& r : k_table) names.emplace_back(r.name);
  return names;
}

Optimizer parse_optimizer(std::string_view subject, std::string_view text) {
  for (const Row& r : k_table)
    if (text == r.name)
      return {r.name, r.copies, r.kind, r.step, r.paged, r.fp32_state, r.transformers_loop, r.description};
  if (!text.empty() && std::isdigit(static_cast<unsigned char>(text[0]))) {
    const uint64_t copies = parse_count(subject, text, 16);
    return {std::string(text),
            copies,
            StateKind::copies,
            false,
            false,
            false,
            false,
            std::to_string(copies) + " state copies per parameter (as given)"};
  }
  throw Error(
      std::string(subject),
      "\"" + std::string(text) +
          "\" is not an optimizer (expected none, sgd, sgd-momentum, adam, adamw, adamw-hf, adagrad, "
          "rmsprop, rmsprop-momentum, lion, adamw-8bit, adafactor, paged-adamw, paged-adamw-8bit or a "
          "number of copies" +
          did_you_mean(text, optimizer_names()) + ")");
}

}  // namespace memplan
