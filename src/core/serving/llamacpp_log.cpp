// Reads llama.cpp's start-up lines about buffers (see llamacpp_log.hpp).
#include "core/serving/llamacpp_log.hpp"

#include <cctype>
#include <cstdlib>
#include <string>

namespace memplan {
namespace {

// The number after the first '=' that follows `key` in `line`, if any.
std::optional<double> number_after_key(std::string_view line, std::string_view key) {
  size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  at = line.find('=', at + key.size());
  if (at == std::string_view::npos) return std::nullopt;
  ++at;
  while (at < line.size() && line[at] == ' ') ++at;
  size_t end = at;
  while (end < line.size() && (std::isdigit(static_cast<unsigned char>(line[end])) || line[end] == '.'))
    ++end;
  if (end == at) return std::nullopt;
  return std::strtod(std::string(line.substr(at, end - at)).c_str(), nullptr);
}

// The device word before `key` ("CUDA0" in "CUDA0 compute buffer size").
std::string device_before(std::string_view line, size_t key_at) {
  size_t end = key_at;
  while (end > 0 && line[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && line[begin - 1] != ' ' && line[begin - 1] != ':' && line[begin - 1] != '\t') --begin;
  return std::string(line.substr(begin, end - begin));
}

// "f16" in "K (f16): 72.00 MiB" for key "K (".
std::string word_in_parens_after(std::string_view line, std::string_view key) {
  const size_t at = line.find(key);
  if (at == std::string_view::npos) return "";
  const size_t close = line.find(')', at);
  if (close == std::string_view::npos) return "";
  return std::string(line.substr(at + key.size(), close - at - key.size()));
}

// The value of `key=` in a slog line: the quoted text, or up to the next space.
std::optional<std::string> slog_value(std::string_view line, std::string_view key) {
  size_t at = 0;
  for (;;) {
    at = line.find(key, at);
    if (at == std::string_view::npos) return std::nullopt;
    const bool starts = at == 0 || line[at - 1] == ' ';
    if (starts && at + key.size() < line.size() && line[at + key.size()] == '=') break;
    at += key.size();
  }
  size_t begin = at + key.size() + 1;
  size_t end;
  if (begin < line.size() && line[begin] == '"') {
    ++begin;
    end = line.find('"', begin);
    if (end == std::string_view::npos) end = line.size();
  } else {
    end = line.find(' ', begin);
    if (end == std::string_view::npos) end = line.size();
  }
  return std::string(line.substr(begin, end - begin));
}

// "[22.0 GiB 4.6 GiB]" -> each size.
std::vector<double> human_bytes_list(std::string text) {
  std::vector<double> out;
  for (char& c : text)
    if (c == '[' || c == ']') c = ' ';
  size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && text[at] == ' ') ++at;
    const size_t num_end = text.find(' ', at);
    if (num_end == std::string::npos) break;
    size_t unit_end = text.find(' ', num_end + 1);
    if (unit_end == std::string::npos) unit_end = text.size();
    if (auto v = parse_human_bytes(text.substr(at, unit_end - at))) out.push_back(*v);
    at = unit_end;
  }
  return out;
}

void read_ollama_offload(std::string_view line, LlamaCppLog& log) {
  OllamaOffloadLine o;
  auto number = [&](std::string_view key) -> std::optional<double> {
    const auto v = slog_value(line, key);
    if (!v || v->empty()) return std::nullopt;
    char* end = nullptr;
    const double x = std::strtod(v->c_str(), &end);
    if (end == v->c_str()) return std::nullopt;
    return x;
  };
  if (auto v = number("layers.requested")) o.requested = static_cast<long>(*v);
  if (auto v = number("layers.model")) o.model_layers = static_cast<uint64_t>(*v);
  if (auto v = number("layers.offload")) o.offload = static_cast<uint64_t>(*v);
  if (auto v = slog_value(line, "layers.split"); v && !v->empty()) {
    size_t at = 0;
    while (at <= v->size()) {
      size_t comma = v->find(',', at);
      if (comma == std::string::npos) comma = v->size();
      o.split.push_back(std::strtoull(v->substr(at, comma - at).c_str(), nullptr, 10));
      at = comma + 1;
    }
  }
  if (auto v = slog_value(line, "memory.available")) o.available = human_bytes_list(*v);
  if (auto v = slog_value(line, "memory.required.allocations")) o.allocations = human_bytes_list(*v);
  auto size = [&](std::string_view key) -> std::optional<double> {
    const auto v = slog_value(line, key);
    return v ? parse_human_bytes(*v) : std::nullopt;
  };
  o.gpu_overhead = size("memory.gpu_overhead");
  o.kv = size("memory.required.kv");
  o.graph_full = size("memory.graph.full");
  o.graph_partial = size("memory.graph.partial");
  log.ollama = o;
}

}  // namespace

std::optional<double> parse_human_bytes(std::string_view text) {
  const size_t space = text.find(' ');
  if (space == std::string_view::npos || space == 0) return std::nullopt;
  const std::string num(text.substr(0, space));
  char* end = nullptr;
  const double x = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size()) return std::nullopt;
  const std::string_view unit = text.substr(space + 1);
  double scale = 0;
  if (unit == "B")
    scale = 1;
  else if (unit == "KiB")
    scale = 1024.0;
  else if (unit == "MiB")
    scale = 1024.0 * 1024;
  else if (unit == "GiB")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "TiB")
    scale = 1024.0 * 1024 * 1024 * 1024;
  if (scale == 0) return std::nullopt;
  return x * scale;
}

LlamaCppLog parse_llamacpp_log(std::string_view text) {
  LlamaCppLog log;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    size_t at;
    if (!line.empty() && line[0] == '#') continue;  // a note above a pasted excerpt, not llama.cpp's
    if ((at = line.find("n_copies=")) != std::string_view::npos ||
        (at = line.find("sched copies = ")) != std::string_view::npos) {
      const std::string_view rest = line.substr(line.find_first_of("=", at) + 1);
      log.sched_copies =
          std::strtoull(std::string(rest.substr(rest.find_first_not_of(' '))).c_str(), nullptr, 10);
      continue;
    }
    if (line.find("n_outputs_max") != std::string_view::npos &&
        line.find("n_outputs_max_per_seq") == std::string_view::npos && !log.n_outputs_max) {
      if (auto v = number_after_key(line, "n_outputs_max")) log.n_outputs_max = static_cast<uint64_t>(*v);
      continue;
    }
    if (line.find("n_seq_max") != std::string_view::npos && !log.n_seq_max) {
      if (auto v = number_after_key(line, "n_seq_max")) log.n_seq_max = static_cast<uint64_t>(*v);
      continue;
    }
    if ((at = line.find("kv_unified")) != std::string_view::npos && !log.kv_unified) {
      const std::string_view rest = line.substr(at);
      log.kv_unified =
          rest.find("true") != std::string_view::npos || rest.find("= 1") != std::string_view::npos;
      continue;
    }
    if (line.find("offloading output layer to GPU") != std::string_view::npos ||
        line.find("offloading non-repeating layers to GPU") != std::string_view::npos)
      log.output_offloaded = true;
    if (line.find("msg=offload") != std::string_view::npos ||
        line.find("msg=\"offload to") != std::string_view::npos) {
      read_ollama_offload(line, log);
    } else if ((at = line.find(" compute buffer size")) != std::string_view::npos) {
      if (auto v = number_after_key(line, "compute buffer size"))
        log.compute_mib[device_before(line, at)] = *v;
    } else if ((at = line.find(" KV buffer size")) != std::string_view::npos) {
      if (auto v = number_after_key(line, "KV buffer size")) log.kv_mib[device_before(line, at)] += *v;
    } else if (line.find("output buffer size") != std::string_view::npos) {
      // the logits' host buffer: not a GPU buffer
    } else if ((at = line.find(" model buffer size")) != std::string_view::npos ||
               ((at = line.find(" buffer size")) != std::string_view::npos &&
                line.find("load_tensors") != std::string_view::npos)) {
      if (auto v = number_after_key(line, "buffer size")) log.model_mib[device_before(line, at)] += *v;
    } else if (line.find("KV self size") != std::string_view::npos) {
      log.kv_total_mib = number_after_key(line, "KV self size");
      log.cache_k = word_in_parens_after(line, "K (");
      log.cache_v = word_in_parens_after(line, "V (");
    } else if (line.find("llama_kv_cache") != std::string_view::npos &&
               line.find(" size = ") != std::string_view::npos &&
               line.find("cells") != std::string_view::npos) {
      const auto v = number_after_key(line, " size");
      log.kv_total_mib = log.kv_total_mib.value_or(0) + v.value_or(0);
      log.cache_k = word_in_parens_after(line, "K (");
      log.cache_v = word_in_parens_after(line, "V (");
    } else if (line.find("n_ctx ") != std::string_view::npos &&
               line.find("n_ctx_") == std::string_view::npos && !log.n_ctx) {
      if (auto v = number_after_key(line, "n_ctx")) log.n_ctx = static_cast<uint64_t>(*v);
    } else if (line.find("n_ubatch") != std::string_view::npos && !log.n_ubatch) {
      if (auto v = number_after_key(line, "n_ubatch")) log.n_ubatch = static_cast<uint64_t>(*v);
    } else if ((at = line.find("flash_attn")) != std::string_view::npos && !log.flash_attn) {
      const std::string_view rest = line.substr(at);
      log.flash_attn =
          rest.find("= 1") != std::string_view::npos || rest.find("enabled") != std::string_view::npos;
    } else if ((at = line.find("offloaded ")) != std::string_view::npos &&
               line.find(" layers to GPU") != std::string_view::npos) {
      const std::string_view rest = line.substr(at + 10);
      const size_t slash = rest.find('/');
      if (slash != std::string_view::npos) {
        log.offloaded = std::strtoull(std::string(rest.substr(0, slash)).c_str(), nullptr, 10);
        log.layers_total = std::strtoull(std::string(rest.substr(slash + 1)).c_str(), nullptr, 10);
      }
    }
  }
  return log;
}

}  // namespace memplan
