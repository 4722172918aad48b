// Reading vLLM's start-up figures out of a log: each key phrase, then the number after it.
#include "core/serving/vllm_log.hpp"

#include "core/serving/log_number.hpp"

#include <cctype>
#include <cstdlib>
#include <string>

namespace memplan {
namespace {

// The number at `pos` (after spaces and ':'), with a leading minus sign kept.
std::optional<double> signed_after(std::string_view text, size_t pos) {
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == ':')) ++pos;
  if (pos < text.size() && text[pos] == '-') {
    const auto v = number_after(text, pos + 1);
    return v ? std::optional<double>(-*v) : std::nullopt;
  }
  return number_after(text, pos);
}

// The number after the last occurrence of `key` that has one.
std::optional<double> last_after(std::string_view text, std::string_view key) {
  std::optional<double> found;
  for (size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1))
    if (auto v = signed_after(text, at + key.size())) found = v;
  return found;
}

template <size_t N>
std::optional<double> first_key(std::string_view text, const std::string_view (&keys)[N]) {
  for (std::string_view k : keys)
    if (auto v = last_after(text, k)) return v;
  return std::nullopt;
}

}  // namespace

VllmLogFigures read_vllm_log(std::string_view text) {
  static const std::string_view weights[] = {"Loading model weights took", "Model loading took",
                                             "model weights take"};
  static const std::string_view blocks[] = {"# GPU blocks", "# cuda blocks", "# CUDA blocks", "GPU blocks"};
  static const std::string_view tokens[] = {"GPU KV cache size"};
  static const std::string_view totals[] = {"total_gpu_memory"};
  static const std::string_view kv[] = {"available_kv_cache_memory", "kv_cache_size",
                                        "reserved for KV Cache is", "Available KV cache memory"};
  VllmLogFigures f;
  f.weights_gib = first_key(text, weights);
  f.gpu_blocks = as_count(first_key(text, blocks));
  f.kv_tokens = as_count(first_key(text, tokens));
  f.total_gib = first_key(text, totals);
  f.kv_gib = first_key(text, kv);
  f.non_torch_gib = last_after(text, "non_torch_memory=");
  // "Requested memory: 0.90 (util), 71.27 GiB"
  const std::string_view requested = "Requested memory:";
  for (size_t at = text.find(requested); at != std::string_view::npos; at = text.find(requested, at + 1)) {
    const size_t util = text.find("(util),", at);
    if (util == std::string_view::npos || util - at > 40) continue;
    const auto u = number_after(text, at + requested.size());
    const auto g = number_after(text, util + 7);
    if (u && g) {
      f.requested_util = u;
      f.requested_gib = g;
    }
  }
  // "Maximum concurrency for 20000 tokens per request: 1.56x"
  const std::string_view key = "Maximum concurrency for";
  for (size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
    const size_t len_at = at + key.size();
    const auto len = number_after(text, len_at);
    const size_t colon = text.find("per request", len_at);
    if (!len || colon == std::string_view::npos || colon - len_at > 40) continue;
    if (auto x = number_after(text, colon + 11)) {
      f.concurrency_tokens = as_count(len);
      f.max_concurrency = x;
    }
  }
  return f;
}

}  // namespace memplan
