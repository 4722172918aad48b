#include "core/models/arch_limits.hpp"

#include <iterator>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>

namespace memplan {
namespace {

namespace L = arch_limit;
const ArchLimit k_limits[] = {
    {"layers", &TransformerArch::layers, L::k_layers},
    {"hidden", &TransformerArch::hidden, L::k_hidden},
    {"heads", &TransformerArch::heads, L::k_heads},
    {"kv_heads", &TransformerArch::kv_heads, L::k_heads},
    {"head_dim", &TransformerArch::head_dim, L::k_head_dim},
    {"intermediate", &TransformerArch::intermediate, L::k_intermediate},
    {"vocab", &TransformerArch::vocab, L::k_vocab},
    {"max_positions", &TransformerArch::max_positions, L::k_max_positions},
    {"experts", &TransformerArch::experts, L::k_experts},
    {"experts_per_token", &TransformerArch::experts_per_token, L::k_experts},
    {"decoder_layers", &TransformerArch::decoder_layers, L::k_layers},
};

}  // namespace

const ArchLimit* arch_limits_begin() { return std::begin(k_limits); }
const ArchLimit* arch_limits_end() { return std::end(k_limits); }

void check_arch_limits(const TransformerArch& a, const std::string& where) {
  for (const ArchLimit& l : k_limits)
    if (a.*l.member > l.max)
      throw Error(where, std::string(l.name) + " " + group_thousands(a.*l.member) +
                             " is above the limit of " + group_thousands(l.max) +
                             " (far beyond any real model: a broken file or a typo)");
}

}  // namespace memplan
