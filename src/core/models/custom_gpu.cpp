#include "core/models/custom_gpu.hpp"

#include <memplan/quantity.hpp>

namespace memplan {
namespace {

bool is_capability(std::string_view f) {
  const auto dot = f.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == f.size() || f.size() > 5) return false;
  for (std::size_t i = 0; i < f.size(); ++i)
    if (i != dot && (f[i] < '0' || f[i] > '9')) return false;
  return true;
}

bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

std::string gpu_name_text(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == ' ' && !out.empty() && is_ascii_digit(out.back())) {
      size_t j = i;
      while (j < text.size() && text[j] == ' ') ++j;
      if (j < text.size() && is_letter(text[j])) {  // "24 GB": the number's unit
        i = j - 1;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

std::optional<GpuSpec> parse_custom_gpu(std::string_view text) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return std::nullopt;
  const auto colon = text.find(':');
  const std::string_view size = text.substr(0, colon);
  // A bare number ("4090") is a name, not a size: a size names its unit.
  const char last = size.empty() ? '0' : size.back();
  if (!((last >= 'a' && last <= 'z') || (last >= 'A' && last <= 'Z'))) return std::nullopt;
  GpuSpec g;
  g.id = std::string(text);
  g.vendor = "custom";
  try {
    g.memory_total_bytes = parse_size("", size);
  } catch (const Error&) {
    return std::nullopt;  // "3070ti": a name; the preset lookup says what is known
  }
  if (g.memory_total_bytes < k_min_gpu_bytes || g.memory_total_bytes > k_max_gpu_bytes)
    throw Error(Field::gpu,
                "\"" + std::string(text) + "\": a GPU's memory must be at least 256MiB and at most 16TiB");
  g.name = format_bytes(g.memory_total_bytes, Units::gib) + " GPU (given as " + std::string(size) + ")";
  g.capabilities_known = false;
  std::string_view rest = colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
  while (colon != std::string_view::npos) {
    const auto next = rest.find(':');
    const std::string_view f = rest.substr(0, next);
    if (f == "bf16") {
      g.bf16 = true;
    } else if (f == "fp8") {
      g.fp8 = true;
    } else if (is_capability(f)) {
      g.vendor = "nvidia";
      g.compute_capability = std::string(f);
    } else {
      throw Error(Field::gpu, "\"" + std::string(text) + "\": unknown feature \"" + std::string(f) +
                                  "\" (expected bf16, fp8 or a compute capability such as 8.9)");
    }
    g.capabilities_known = true;
    if (next == std::string_view::npos) break;
    rest = rest.substr(next + 1);
  }
  g.source = "given on the command line";
  g.notes = g.capabilities_known ? "" : "capabilities not stated: no hardware warning is made";
  return g;
}

}  // namespace memplan
