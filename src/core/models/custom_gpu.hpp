#pragma once
// A GPU given by its capacity on the command line ("12GiB", "24GB:bf16", "16GiB:8.9") rather
// than by a preset id.

#include <optional>
#include <string>
#include <string_view>

#include <memplan/gpu.hpp>

namespace memplan {

// Largest capacity a GPU spec may state: 16 TiB (ten times today's largest single accelerator),
// so a typo such as 24PB is an error, not a fit.
inline constexpr uint64_t k_max_gpu_bytes = 16ull << 40;
inline constexpr uint64_t k_min_gpu_bytes = 256ull << 20;

// nullopt when `text` is not a size with a unit before its first ':' ("4090", "3070ti": names,
// for the preset lookup). Otherwise parses `<size>[:<feature>]...` where a feature is `bf16`,
// `fp8` or a CUDA compute capability such as `8.9`; throws Error(Field::gpu) for a size out of
// [256MiB, 16TiB] or an unknown feature. Without features the GPU's capabilities are unknown and
// no hardware warning is made for it.
std::optional<GpuSpec> parse_custom_gpu(std::string_view text);

// One name of a --gpu list as the lookup reads it: spaces around it dropped and a space between
// a number and its unit closed, so " 24 GB" is "24GB" (the 24gb preset), as the same words
// typed without the space; other text is unchanged ("rtx 4090" stays, for did-you-mean).
std::string gpu_name_text(std::string_view text);

}  // namespace memplan
