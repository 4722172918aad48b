#pragma once
// Optimizers and the state they keep per trainable parameter:
// sgd 0 copies, sgd-momentum 1, adam/adamw/adamw-hf 2, adagrad 1, rmsprop 1 (2 with momentum), lion 1,
// adamw-8bit 2 copies of 1 byte plus block constants, adafactor factored, none for inference;
// bitsandbytes' paged-adamw (fp32 state) and paged-adamw-8bit keep large tensors' state in unified
// memory (core/memory/paged_state.hpp).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <memplan/storage_format.hpp>

namespace memplan {

enum class StateKind {
  copies,         // `copies` full-size tensors in the recipe's optimizer-state format
  blockwise8bit,  // `copies` tensors of 1 byte + one fp32 absmax per 256-element block (bitsandbytes)
  factored,       // Adafactor: row + column statistics per matrix, full size for vectors
};

struct Optimizer {
  std::string name;     // "adamw", "2" (bare copies)
  uint64_t copies = 0;  // state tensors per parameter
  StateKind kind = StateKind::copies;
  bool step_per_tensor = false;  // torch.optim.Adam/AdamW keep a 4-byte float32 `step` per tensor
  bool paged = false;            // bitsandbytes paged: state of tensors >= 1e5 numbers in unified memory
  bool fp32_state = false;       // bitsandbytes 32-bit optimizers: float32 state whatever the weights
  // transformers.AdamW (optim="adamw_hf"): one tensor at a time, one temporary each (denom), the
  // step counter a Python int (core/memory/optimizer_loop.hpp)
  bool transformers_loop = false;
  std::string description;
};

// bitsandbytes' blockwise 8-bit optimizer state: 1 byte per element + fp32 absmax per 256 elements.
inline constexpr ElementCost k_blockwise8bit_cost{1 * 256 + 4, 256};

// Parses a name or a bare number of copies ("2").
Optimizer parse_optimizer(std::string_view subject, std::string_view text);

std::vector<std::string> optimizer_names();

}  // namespace memplan
