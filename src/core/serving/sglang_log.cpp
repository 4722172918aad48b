// Reading SGLang's start-up figures out of a log: each key phrase, then the number after it.
#include "core/serving/sglang_log.hpp"

#include "core/serving/log_number.hpp"

#include <cctype>
#include <cstdlib>
#include <string>

namespace memplan {
namespace {

// The line (without its end) that holds `at`.
std::string_view line_of(std::string_view text, size_t at) {
  const size_t begin = text.rfind('\n', at);
  const size_t from = begin == std::string_view::npos ? 0 : begin + 1;
  const size_t end = text.find('\n', at);
  return text.substr(from, (end == std::string_view::npos ? text.size() : end) - from);
}

// The number after `key` in the last line that contains `marker` and has one.
std::optional<double> last_in_line(std::string_view text, std::string_view marker, std::string_view key) {
  std::optional<double> found;
  for (size_t at = text.find(marker); at != std::string_view::npos; at = text.find(marker, at + 1)) {
    const std::string_view line = line_of(text, at);
    const size_t k = line.find(key);
    if (k == std::string_view::npos) continue;
    if (auto v = number_after(line, k + key.size())) found = v;
  }
  return found;
}

}  // namespace

SglangLogFigures read_sglang_log(std::string_view text) {
  SglangLogFigures f;
  f.free_before_gib = last_in_line(text, "Load weight begin", "avail mem");
  f.free_after_gib = last_in_line(text, "Load weight end", "avail mem");
  f.weights_gib = last_in_line(text, "Load weight end", "mem usage");
  f.kv_tokens = as_count(last_in_line(text, "KV Cache is allocated", "#tokens"));
  if (!f.kv_tokens)
    f.kv_tokens = as_count(last_in_line(text, "max_total_num_tokens", "max_total_num_tokens"));
  if (auto kv = last_in_line(text, "KV Cache is allocated", "KV size")) {
    f.pool_gib = kv;
  } else {
    const auto k = last_in_line(text, "KV Cache is allocated", "K size");
    const auto v = last_in_line(text, "KV Cache is allocated", "V size");
    if (k && v) f.pool_gib = *k + *v;
  }
  f.context_len = as_count(last_in_line(text, "max_total_num_tokens", "context_len"));
  f.mem_fraction_static = last_in_line(text, "mem_fraction_static", "mem_fraction_static");
  return f;
}

}  // namespace memplan
