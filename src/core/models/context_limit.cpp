#include "core/models/context_limit.hpp"

#include "core/models/arch_layout.hpp"

namespace memplan {

ContextLimit context_limit(const TransformerArch& arch) {
  TransformerArch a = arch;
  apply_layout_defaults(a);  // the family's layout, as the estimate reads it
  ContextLimit c;
  c.positions = a.max_positions;
  if (!c.positions) return c;
  c.learned = a.position_embedding == "learned";
  c.longest = c.learned ? c.positions
                        : (c.positions > UINT64_MAX / k_max_context_extension
                               ? UINT64_MAX
                               : c.positions * k_max_context_extension);
  return c;
}

}  // namespace memplan
