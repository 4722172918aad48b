#include <memplan/framework_profile.hpp>

#include "core/profiles/profiles.hpp"

namespace memplan {

const FrameworkProfile& framework_profile(Framework f) {
  static const FrameworkProfile table[] = {
      profiles::hf(),           profiles::trainer(),   profiles::trl(),     profiles::axolotl(),
      profiles::llamafactory(), profiles::torchtune(), profiles::unsloth(), profiles::litgpt()};
  for (const FrameworkProfile& p : table)
    if (p.framework == f) return p;
  return table[0];
}

}  // namespace memplan
