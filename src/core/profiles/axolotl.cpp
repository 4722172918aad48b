// axolotl: axolotl (a Trainer).
#include "core/profiles/profiles.hpp"

namespace memplan::profiles {

FrameworkProfile axolotl() {
  FrameworkProfile p;
  p.framework = Framework::axolotl;
  p.release = "axolotl";
  p.runs = "axolotl (a Trainer)";
  return p;
}

}  // namespace memplan::profiles
