#pragma once
// One function per framework profile (framework_profile.hpp), each in its own file.
#include <memplan/framework_profile.hpp>

namespace memplan::profiles {

// Every profile that loads through transformers' from_pretrained (a BitsAndBytesConfig for QLoRA).
inline constexpr std::string_view k_transformers_bnb_load =
    "transformers 5.24.0 modeling_utils.py caching_allocator_warmup (from 4.50; bnb 4-bit weights at "
    "quantized_element_size 0.5) and core_model_loading.py (on-the-fly quantisation loads one tensor at a "
    "time: tensor.to(device, dtype), then integrations/bitsandbytes.py Params4bit(...).to(device))";

FrameworkProfile hf();
FrameworkProfile trainer();
FrameworkProfile trl();
FrameworkProfile axolotl();
FrameworkProfile llamafactory();
FrameworkProfile torchtune();
FrameworkProfile unsloth();
FrameworkProfile litgpt();

}  // namespace memplan::profiles
