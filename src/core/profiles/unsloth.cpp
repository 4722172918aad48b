// unsloth: unsloth's patched transformers models.
#include "core/profiles/profiles.hpp"

namespace memplan::profiles {

FrameworkProfile unsloth() {
  FrameworkProfile p;
  p.framework = Framework::unsloth;
  p.release = "unsloth";
  p.runs = "unsloth's patched transformers models";
  return p;
}

}  // namespace memplan::profiles
