#include <memplan/cuda_context.hpp>

#include <cctype>
#include <cmath>
#include <cstdlib>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"

namespace memplan {
namespace {

// Maximum resident threads per SM, CUDA C++ Programming Guide, "Technical Specifications per
// Compute Capability"
// (https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#features-and-technical-specifications-technical-specifications-per-compute-capability).
struct ThreadsRow {
  int cc;  // major x 10 + minor
  uint64_t threads;
};
constexpr ThreadsRow k_threads_per_sm[] = {
    {50, 2048}, {52, 2048}, {53, 2048},  {60, 2048},  {61, 2048},  {62, 2048},
    {70, 2048}, {72, 2048}, {75, 1024},  {80, 2048},  {86, 1536},  {87, 2048},
    {89, 1536}, {90, 2048}, {100, 2048}, {103, 2048}, {120, 1536}, {121, 1536},
};

std::string lower(std::string_view s) {
  std::string t(s);
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return t;
}

// "12.8" -> {12, 8}; false when the text is not MAJOR or MAJOR.MINOR in digits.
bool split_version(std::string_view text, uint32_t& major, uint32_t& minor) {
  const auto dot = text.find('.');
  const std::string_view a = text.substr(0, dot),
                         b = dot == std::string_view::npos ? "0" : text.substr(dot + 1);
  auto digits = [](std::string_view s) {
    if (s.empty() || s.size() > 2) return false;
    for (char c : s)
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
  };
  if (!digits(a) || !digits(b)) return false;
  major = static_cast<uint32_t>(std::atoi(std::string(a).c_str()));
  minor = static_cast<uint32_t>(std::atoi(std::string(b).c_str()));
  return true;
}

// A plan file's JSON number 12.8 reads back as "12.800000000000001": a decimal within 1e-6 of
// MAJOR.MINOR with one minor digit is that version.
bool one_decimal(std::string_view text, uint32_t& major, uint32_t& minor) {
  const std::string t(text);
  char* end = nullptr;
  const double d = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !(d >= 8.0 && d < 100.0)) return false;
  const double tenths = std::round(d * 10.0);
  if (std::fabs(d * 10.0 - tenths) > 1e-6) return false;
  major = static_cast<uint32_t>(tenths / 10.0);
  minor = static_cast<uint32_t>(tenths) - major * 10;
  return true;
}

}  // namespace

CudaVersion parse_cuda_version(std::string_view subject, std::string_view text) {
  CudaVersion v;
  if ((!split_version(text, v.major, v.minor) && !one_decimal(text, v.major, v.minor)) || v.major < 8)
    throw Error(
        std::string(subject),
        "\"" + std::string(text) + "\" is not a CUDA version (expected MAJOR.MINOR from 8.0 on, e.g. 12.8)");
  return v;
}

std::string to_string(CudaVersion v) { return std::to_string(v.major) + "." + std::to_string(v.minor); }

ModuleLoading parse_module_loading(std::string_view subject, std::string_view text) {
  const std::string t = lower(text);
  if (t == "lazy" || t == "default") return ModuleLoading::lazy;
  if (t == "eager") return ModuleLoading::eager;
  throw Error(std::string(subject),
              "\"" + std::string(text) + "\" is not a module loading mode (expected lazy or eager)");
}

const char* to_string(ModuleLoading m) { return m == ModuleLoading::eager ? "eager" : "lazy"; }

uint64_t max_threads_per_sm(const std::string& compute_capability) {
  uint32_t major = 0, minor = 0;
  if (!split_version(compute_capability, major, minor)) return 0;
  const int cc = static_cast<int>(major * 10 + minor);
  for (const ThreadsRow& row : k_threads_per_sm)
    if (row.cc == cc) return row.threads;
  return 0;
}

CudaContext cuda_context(const GpuSpec& gpu, const CudaRuntime& runtime) {
  CudaContext c;
  c.loading = runtime.loading;
  const uint64_t threads = gpu.vendor == "nvidia" ? max_threads_per_sm(gpu.compute_capability) : 0;
  c.known = gpu.sm_count != 0 && threads != 0;
  c.sm_count = c.known ? gpu.sm_count : k_measured_sm_count;
  c.threads_per_sm = c.known ? threads : k_measured_threads_per_sm;
  c.local_memory_bytes = checked_mul(checked_mul(k_cuda_stack_bytes, c.threads_per_sm, "local memory"),
                                     c.sm_count, "local memory");
  c.rest_bytes = k_cuda_context_rest_bytes;
  c.eager_kernel_bytes = runtime.loading == ModuleLoading::eager ? k_eager_kernel_bytes : 0;
  return c;
}

}  // namespace memplan
