#include "core/diagnose/oom_message.hpp"

#include "core/base/checked.hpp"
#include "core/base/terminal_text.hpp"

#include <cmath>
#include <limits>
#include <unordered_set>

namespace memplan {
namespace {

using std::string_view;

constexpr size_t npos = string_view::npos;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A decimal integer at the start of `s` (at most 18 digits); `used` gets its length.
std::optional<uint64_t> parse_uint(string_view s, size_t* used = nullptr) {
  size_t i = 0;
  uint64_t v = 0;
  while (i < s.size() && is_digit(s[i]) && i < 18) v = v * 10 + static_cast<uint64_t>(s[i++] - '0');
  if (i == 0 || (i < s.size() && is_digit(s[i]))) return std::nullopt;
  if (used) *used = i;
  return v;
}

// The size printed right after `phrase` in `line` (searching from `from`), or nullopt.
std::optional<uint64_t> size_after(string_view line, string_view phrase, size_t from = 0) {
  const size_t at = line.find(phrase, from);
  if (at == npos) return std::nullopt;
  return parse_printed_size(line.substr(at + phrase.size()));
}

std::optional<uint64_t> uint_after(string_view line, string_view phrase) {
  const size_t at = line.find(phrase);
  if (at == npos) return std::nullopt;
  return parse_uint(line.substr(at + phrase.size()));
}

// A printed GPU index as an int; one above INT_MAX (issue 32: "GPU 4294967295" printed "GPU -1") is
// no real device, so it is refused rather than wrapped.
int device_id(uint64_t d) {
  if (d > static_cast<uint64_t>(std::numeric_limits<int>::max()))
    throw Error("FILE", "the message names GPU " + std::to_string(d) + ", out of range for a device index");
  return static_cast<int>(d);
}

bool starts_with(string_view s, string_view p) { return s.substr(0, p.size()) == p; }

// "(GPU 0; 6.00 GiB total capacity; 781.59 MiB already allocated; 3.03 GiB free; 1.24 GiB reserved in
// total by PyTorch)" - each part a size and what it is.
void read_older_parts(string_view rest, OomMessage& m) {
  m.older_wording = true;
  if (starts_with(rest, " (GPU ")) {
    size_t n = 0;
    if (auto d = parse_uint(rest.substr(6), &n)) m.device = device_id(*d);
  }
  const size_t close = rest.find(')');
  string_view parts = rest.substr(0, close);
  size_t start = parts.find(';');
  while (start != npos) {
    size_t end = parts.find(';', start + 1);
    string_view part = parts.substr(start + 1, end == npos ? npos : end - start - 1);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    size_t used = 0;
    if (auto bytes = parse_printed_size(part, &used)) {
      const string_view what = part.substr(used);
      if (starts_with(what, " total capacity"))
        m.total = bytes;
      else if (starts_with(what, " already allocated"))
        m.allocated = bytes;
      else if (starts_with(what, " free"))
        m.free = bytes;
      else if (starts_with(what, " reserved in total"))
        m.reserved = bytes;
      else if (starts_with(what, " cached")) {
        m.reserved = bytes;
        m.cached_wording = true;
      }
    }
    start = end;
  }
}

// "GPU 0 has a total capacity of 31.47 GiB of which 12.73 GiB is free. Including non-PyTorch memory,
// this process has 18.73 GiB memory in use. Of the allocated memory 9.08 GiB is allocated by
// PyTorch, and 9.35 GiB is reserved by PyTorch but unallocated." ("capacty" in some releases.)
void read_newer_parts(string_view line, OomMessage& m) {
  if (auto d = uint_after(line, " GPU ")) m.device = device_id(*d);
  size_t cap = line.find("has a total capacity of ");
  size_t cap_len = 24;
  if (cap == npos) {
    cap = line.find("has a total capacty of ");
    cap_len = 23;
  }
  if (cap != npos) {
    size_t used = 0;
    m.total = parse_printed_size(line.substr(cap + cap_len), &used);
    if (m.total) m.free = size_after(line.substr(cap + cap_len + used), " of which ");
  }
  m.process_in_use = size_after(line, "this process has ");
  for (size_t at = line.find("Process "); at != npos; at = line.find("Process ", at + 8)) {
    size_t n = 0;
    const auto pid = parse_uint(line.substr(at + 8), &n);
    if (!pid || line.substr(at + 8 + n, 5) != " has ") continue;
    if (auto bytes = parse_printed_size(line.substr(at + 8 + n + 5))) m.processes.push_back({*pid, *bytes});
  }
  m.allocated = size_after(line, "Of the allocated memory ");
  const size_t and_at = line.find("is allocated by PyTorch, and ");
  if (and_at != npos) m.reserved_unallocated = parse_printed_size(line.substr(and_at + 29));
  if (m.allocated && m.reserved_unallocated)
    m.reserved = checked_add(*m.allocated, *m.reserved_unallocated, "the message's reserved bytes");
}

std::optional<OomMessage> read_pytorch(string_view line) {
  const string_view phrase = "Tried to allocate ";
  const size_t at = line.find(phrase);
  if (at == npos || line.find("out of memory") == npos) return std::nullopt;
  OomMessage m;
  m.kind = OomKind::pytorch;
  size_t used = 0;
  m.requested = parse_printed_size(line.substr(at + phrase.size()), &used);
  if (!m.requested) return std::nullopt;
  const string_view rest = line.substr(at + phrase.size() + used);
  if (starts_with(rest, " (GPU") || starts_with(rest, " ("))
    read_older_parts(rest, m);
  else
    read_newer_parts(rest, m);
  return m;
}

std::optional<OomMessage> read_vllm(string_view line) {
  OomMessage m;
  if (line.find("is larger than the maximum number of tokens that can be stored in KV cache (") != npos) {
    m.kind = OomKind::vllm_max_seq_len;
    auto n = uint_after(line, "max seq len (");
    auto k = uint_after(line, "stored in KV cache (");
    if (!n || !k) return std::nullopt;
    m.max_seq_len = *n;
    m.kv_tokens = *k;
    return m;
  }
  if (line.find("KV cache is needed, which is larger than the available KV cache memory (") != npos) {
    m.kind = OomKind::vllm_kv_needed;
    auto n = uint_after(line, "max seq len (");
    if (!n) return std::nullopt;
    m.max_seq_len = *n;
    m.kv_needed = size_after(line, "), (");
    m.kv_available = size_after(line, "available KV cache memory (");
    if (auto e = uint_after(line, "estimated maximum model length is ")) m.estimated_max_len = *e;
    return m;
  }
  if (line.find("No available memory for the cache blocks") != npos) {
    m.kind = OomKind::vllm_no_cache_blocks;
    return m;
  }
  return std::nullopt;
}

// "allocating 144817.04 MiB on device 0: cudaMalloc failed: out of memory"
std::optional<OomMessage> read_llama_alloc(string_view line) {
  const size_t at = line.find("allocating ");
  if (at == npos || line.find("cudaMalloc failed: out of memory") == npos) return std::nullopt;
  OomMessage m;
  m.kind = OomKind::llama_cpp;
  m.buffer_bytes = parse_printed_size(line.substr(at + 11));
  if (auto d = uint_after(line, " on device ")) m.buffer_device = "CUDA" + std::to_string(*d);
  return m;
}

// "alloc_tensor_range: failed to allocate CUDA0 buffer of size 151851674624", and the lines that
// name which buffer it was.
bool refine_llama(string_view line, OomMessage& m) {
  const size_t at = line.find("failed to allocate ");
  const size_t of = line.find(" buffer of size ");
  if (at != npos && of != npos && of > at) {
    m.buffer_device = std::string(line.substr(at + 19, of - at - 19));
    if (auto n = parse_uint(line.substr(of + 16))) m.buffer_bytes = n;
    if (line.find("alloc_tensor_range") != npos) m.buffer = LlamaBuffer::weights;
    if (line.find("gallocr") != npos) m.buffer = LlamaBuffer::compute;
    return true;
  }
  if (line.find("failed to allocate buffer for kv cache") != npos ||
      line.find("llama_kv_cache_init() failed") != npos) {
    m.buffer = LlamaBuffer::kv_cache;
    return true;
  }
  if (line.find("failed to allocate compute buffers") != npos) {
    if (m.buffer == LlamaBuffer::unknown) m.buffer = LlamaBuffer::compute;
    return true;
  }
  if (line.find("error loading model") != npos || line.find("unable to allocate backend buffer") != npos) {
    if (m.buffer == LlamaBuffer::unknown) m.buffer = LlamaBuffer::weights;
    return true;
  }
  return false;
}

// Everything `same` compared, as one string: a hash set of these finds a repeat in one look-up
// (issue 32: comparing each message with every kept one was quadratic).
std::string identity(const OomMessage& m) {
  std::string k;
  const auto num = [&k](const std::optional<uint64_t>& v) { k += v ? std::to_string(*v) + ',' : "-,"; };
  k += std::to_string(static_cast<int>(m.kind)) + ',' + std::to_string(static_cast<int>(m.buffer)) + ',';
  k += m.device ? std::to_string(*m.device) + ',' : "-,";
  for (const auto& v :
       {m.requested, m.total, m.free, m.allocated, m.reserved, m.process_in_use, m.kv_needed, m.buffer_bytes})
    num(v);
  k += std::to_string(m.max_seq_len) + ',' + std::to_string(m.kv_tokens) + ';';
  for (const auto& [pid, bytes] : m.processes) k += std::to_string(pid) + ':' + std::to_string(bytes) + ',';
  k += ';' + m.buffer_device;
  return k;
}

// Issue 32: a capacity printed as no size ("-23.65 GiB", "inf GiB", "nan GiB") dropped the GPU total
// row without a word, and "0 bytes" was read as a GPU of none: either is refused with the line.
void check_total(const OomMessage& m, string_view line, size_t line_no) {
  if (m.total && *m.total > 0) return;
  size_t at = line.find("total capac");
  if (at == npos) return;
  const size_t from = at >= 24 ? at - 24 : 0;
  throw Error("FILE", "line " + std::to_string(line_no) +
                          ": the GPU's total capacity is not a positive size (" +
                          terminal_field(line.substr(from, 64), 64) +
                          "; expected one as PyTorch prints it, such as \"23.65 GiB\")");
}

}  // namespace

std::optional<uint64_t> parse_printed_size(string_view s, size_t* used) {
  size_t i = 0;
  while (i < s.size() && is_digit(s[i]) && i < 24) ++i;
  const size_t int_digits = i;
  if (int_digits == 0 || int_digits > 15) return std::nullopt;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i]) && i < int_digits + 8) ++i;
  }
  const double value = std::stod(std::string(s.substr(0, i)));
  if (i >= s.size() || s[i] != ' ') return std::nullopt;
  const string_view unit = s.substr(i + 1);
  struct Unit {
    string_view name;
    double bytes;
  };
  static constexpr Unit units[] = {{"bytes", 1.0},        {"KiB", 1024.0},          {"MiB", 1048576.0},
                                   {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}, {"B", 1.0}};
  for (const Unit& u : units) {
    if (!starts_with(unit, u.name)) continue;
    const double bytes = std::round(value * u.bytes);
    if (!(bytes < 1.8e19)) return std::nullopt;
    if (used) *used = i + 1 + u.name.size();
    return static_cast<uint64_t>(bytes);
  }
  return std::nullopt;
}

std::vector<OomMessage> parse_oom_messages(string_view text, size_t* omitted) {
  std::vector<OomMessage> found;
  std::unordered_set<std::string> seen;
  size_t dropped = 0;
  std::optional<OomMessage> llama;  // a llama.cpp failure whose next lines may name the buffer
  size_t llama_lines = 0;
  auto keep = [&](OomMessage m) {
    if (found.size() >= k_max_oom_messages) {  // bounded: the rest only counted
      ++dropped;
      return;
    }
    if (seen.insert(identity(m)).second) found.push_back(std::move(m));
  };
  size_t line_no = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == npos) end = text.size();
    string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (llama) {
      if (refine_llama(line, *llama) && llama_lines < 3) {
        ++llama_lines;
        continue;
      }
      keep(*llama);
      llama.reset();
    }
    std::optional<OomMessage> m = read_pytorch(line);
    if (m) check_total(*m, line, line_no);
    if (!m) m = read_vllm(line);
    if (!m) {
      m = read_llama_alloc(line);
      if (!m) {
        OomMessage bare;
        bare.kind = OomKind::llama_cpp;
        if (line.find(" buffer of size ") != npos && refine_llama(line, bare)) m = bare;
      }
      if (m) {
        m->line = line_no;
        llama = m;
        llama_lines = 0;
        continue;
      }
    }
    if (m) {
      m->line = line_no;
      keep(*m);
    }
  }
  if (llama) keep(*llama);
  if (omitted) *omitted = dropped;
  return found;
}

OomReading read_pytorch_oom(const OomMessage& m) {
  OomReading r;
  if (m.reserved_unallocated)
    r.reserved_unallocated = m.reserved_unallocated;
  else if (m.reserved && m.allocated && *m.reserved >= *m.allocated)
    r.reserved_unallocated = *m.reserved - *m.allocated;
  // Sums checked (issue 32: sizes of "16000000 TiB" wrapped): an overflow refuses the message.
  if (m.free)
    r.available = checked_add(*m.free, r.reserved_unallocated.value_or(0), "the message's free bytes");
  if (m.requested && r.available && *m.requested > *r.available) r.shortfall = *m.requested - *r.available;
  if (m.total && m.free && m.reserved && *m.total >= checked_add(*m.free, *m.reserved, "the message's bytes"))
    r.outside_allocator = *m.total - *m.free - *m.reserved;
  if (m.total && m.free && m.process_in_use &&
      *m.total >= checked_add(*m.free, *m.process_in_use, "the message's bytes"))
    r.other_processes = *m.total - *m.free - *m.process_in_use;
  if (m.process_in_use && m.reserved && *m.process_in_use >= *m.reserved)
    r.process_non_pytorch = *m.process_in_use - *m.reserved;
  r.request_exceeds_gpu = m.requested && m.total && *m.requested > *m.total;
  r.allocated_exceeds_total = m.allocated && m.total && *m.allocated > *m.total;
  r.free_but_failed = m.requested && m.free && *m.free >= *m.requested;
  // Fragmentation: the cache held the bytes asked for but not in one block, or a quarter of what
  // it reserves sits idle in split blocks (the case PyTorch's own hint names).
  // Only when the device itself was short: with enough free memory the cache's shape is moot.
  if (r.reserved_unallocated && *r.reserved_unallocated > 0 && m.requested && !r.request_exceeds_gpu &&
      !r.free_but_failed) {
    const uint64_t u = *r.reserved_unallocated;
    r.fragmentation = u >= *m.requested || (m.reserved && u >= *m.reserved / 4 + (*m.reserved % 4 != 0));
  }
  return r;
}

}  // namespace memplan
