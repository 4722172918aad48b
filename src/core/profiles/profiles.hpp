#pragma once
// One function per framework profile (framework_profile.hpp), each in its own file.
#include <memplan/framework_profile.hpp>

namespace memplan::profiles {

FrameworkProfile hf();
FrameworkProfile trainer();
FrameworkProfile trl();
FrameworkProfile axolotl();
FrameworkProfile llamafactory();
FrameworkProfile torchtune();
FrameworkProfile unsloth();
FrameworkProfile litgpt();

}  // namespace memplan::profiles
