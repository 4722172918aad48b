// llamafactory: LLaMA-Factory (a Trainer).
#include "core/profiles/profiles.hpp"

namespace memplan::profiles {

FrameworkProfile llamafactory() {
  FrameworkProfile p;
  p.framework = Framework::llamafactory;
  p.release = "LLaMA-Factory";
  p.runs = "LLaMA-Factory (a Trainer)";
  return p;
}

}  // namespace memplan::profiles
