#include "core/models/safetensors.hpp"

#include <algorithm>
#include <set>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"
#include "core/base/did_you_mean.hpp"
#include "core/base/file_reader.hpp"

#include "core/base/json_text.hpp"

namespace memplan {
namespace {

using nlohmann::json;

// A name from the file, quoted for a message: printable bytes only, at most 100 of them.
std::string in_quotes(std::string_view s) { return "\"" + detail::printable(s, 100) + "\""; }

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// A whole number >= 0 from the header, or Error naming the tensor and field.
uint64_t header_uint(const json& v, const std::string& file, const std::string& tensor, const char* field) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  std::string why = v.is_number_integer() ? " is negative"
                    : v.is_number()       ? " is not a whole number"
                                          : " is not a number";
  throw Error(file, "tensor " + in_quotes(tensor) + ": " + field + " value " + detail::json_brief(v) + why +
                        " (expected whole numbers >= 0)");
}

SafetensorsTensor parse_entry(const std::string& file, const std::string& name, const json& v) {
  auto fail = [&](const std::string& msg) { throw Error(file, "tensor " + in_quotes(name) + ": " + msg); };
  if (!v.is_object())
    fail("is " + detail::json_brief(v) + ", not an object with dtype, shape and data_offsets");
  SafetensorsTensor t;
  t.name = name;
  auto dt = v.find("dtype");
  auto sh = v.find("shape");
  auto off = v.find("data_offsets");
  if (dt == v.end()) fail("has no dtype");
  if (sh == v.end()) fail("has no shape");
  if (off == v.end()) fail("has no data_offsets");
  if (!dt->is_string()) fail("dtype " + detail::json_brief(*dt) + " is not a string");
  t.dtype = dt->get<std::string>();
  if (!find_safetensors_dtype(t.dtype)) {
    std::vector<std::string> names;
    for (const SafetensorsDtype& d : safetensors_dtypes()) names.emplace_back(d.name);
    fail("unknown dtype " + in_quotes(t.dtype) +
         " (expected one of F64, F32, F16, BF16, F8_E4M3, I64, I32, I8, U8, "
         "BOOL, ...)" +
         did_you_mean(t.dtype, names));
  }
  if (!sh->is_array()) fail("shape " + detail::json_brief(*sh) + " is not a list");
  if (sh->size() > 64) fail("shape has " + std::to_string(sh->size()) + " dimensions (at most 64)");
  t.elements = 1;
  for (const json& d : *sh) {
    t.shape.push_back(header_uint(d, file, name, "shape"));
    u128 p = static_cast<u128>(t.elements) * t.shape.back();
    if (p > UINT64_MAX) fail("shape " + detail::json_brief(*sh) + " has more than 2^64 elements");
    t.elements = static_cast<uint64_t>(p);
  }
  if (!off->is_array() || off->size() != 2)
    fail("data_offsets " + detail::json_brief(*off) + " is not [begin, end]");
  t.begin = header_uint((*off)[0], file, name, "data_offsets");
  t.end = header_uint((*off)[1], file, name, "data_offsets");
  if (t.end < t.begin)
    fail("data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
         "] end before they begin");
  return t;
}

}  // namespace

const std::vector<SafetensorsDtype>& safetensors_dtypes() {
  static const std::vector<SafetensorsDtype> table = {
      {"BOOL", 8, ""},
      {"F4", 4, ""},
      {"F6_E2M3", 6, ""},
      {"F6_E3M2", 6, ""},
      {"U8", 8, "int8"},
      {"I8", 8, "int8"},
      {"F8_E5M2", 8, "fp8-e5m2"},
      {"F8_E4M3", 8, "fp8-e4m3"},
      {"F8_E8M0", 8, ""},
      {"F8_E4M3FNUZ", 8, "fp8-e4m3"},
      {"F8_E5M2FNUZ", 8, "fp8-e5m2"},
      {"I16", 16, ""},
      {"U16", 16, ""},
      {"F16", 16, "fp16"},
      {"BF16", 16, "bf16"},
      {"I32", 32, ""},
      {"U32", 32, ""},
      {"F32", 32, "fp32"},
      {"C64", 64, ""},
      {"F64", 64, "fp64"},
      {"I64", 64, ""},
      {"U64", 64, ""},
  };
  return table;
}

const SafetensorsDtype* find_safetensors_dtype(std::string_view name) {
  for (const SafetensorsDtype& d : safetensors_dtypes())
    if (name == d.name) return &d;
  return nullptr;
}

bool is_buffer_tensor_name(std::string_view name) {
  static const char* suffixes[] = {
      ".inv_freq",    ".attn.bias",  ".attn.masked_bias", ".attention.bias", ".attention.masked_bias",
      ".masked_bias", "position_ids"};
  for (std::string_view s : suffixes) {
    if (name.size() >= s.size() && name.substr(name.size() - s.size()) == s) return true;
    if (s.front() == '.' && name == s.substr(1)) return true;
  }
  return false;
}

SafetensorsHeader parse_safetensors_header(std::string_view bytes, uint64_t file_size,
                                           std::string_view file_name) {
  SafetensorsHeader h;
  h.file = file_name;
  h.file_size = file_size;
  const std::string& file = h.file;
  if (file_size < 8)
    throw Error(file, "is " + std::to_string(file_size) +
                          " bytes, too short for a safetensors file (8-byte header length first)");
  if (bytes.size() < 8) throw Error(file, "the 8-byte header length is truncated");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  h.header_length = n;
  if (n > k_max_safetensors_header)
    throw Error(file, "header length " + group_thousands(n) + " is larger than the " +
                          group_thousands(k_max_safetensors_header) +
                          "-byte limit (not a safetensors file?)");
  if (n == 0) throw Error(file, "header length is 0 (expected a JSON header)");
  if (8 + n > file_size)
    throw Error(file, "header length " + group_thousands(n) + " runs past the end of the file (" +
                          group_thousands(file_size) + " bytes)");
  if (bytes.size() < 8 + n)
    throw Error(file, "the header is truncated (" + std::to_string(bytes.size() - 8) + " of " +
                          std::to_string(n) + " bytes)");
  h.data_bytes = file_size - 8 - n;
  std::string_view text = bytes.substr(8, static_cast<size_t>(n));
  if (text.front() != '{') throw Error(file, "the header does not start with '{' (not a safetensors file?)");
  json j = detail::parse_json_text(text, file, "the safetensors header");
  if (!j.is_object()) throw Error(file, "the safetensors header is not a JSON object");

  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object()) throw Error(file, "__metadata__ is not an object of strings");
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string())
          throw Error(file, "__metadata__ " + in_quotes(m.key()) + " is " + detail::json_brief(*m) +
                                ", not a string");
        h.metadata[m.key()] = m->get<std::string>();
      }
      continue;
    }
    h.tensors.push_back(parse_entry(file, it.key(), *it));
  }

  // The reference sorts by offsets, then walks: each tensor starts where the previous ended.
  std::sort(h.tensors.begin(), h.tensors.end(), [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t at = 0;
  const SafetensorsTensor* prev = nullptr;
  for (const SafetensorsTensor& t : h.tensors) {
    auto fail = [&](const std::string& msg) {
      throw Error(file, "tensor " + in_quotes(t.name) + ": " + msg);
    };
    std::string span = "data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]";
    if (t.begin < at)
      fail(span + " overlap tensor " + in_quotes(prev->name) + " (which ends at " + std::to_string(at) + ")");
    if (t.begin > at)
      fail(span + " leave a gap of " + std::to_string(t.begin - at) + " bytes after " +
           (prev ? "tensor " + in_quotes(prev->name) : std::string("the header")) +
           " (the data must be contiguous)");
    const SafetensorsDtype* d = find_safetensors_dtype(t.dtype);
    u128 bits = static_cast<u128>(t.elements) * d->bits;
    if (bits % 8 != 0)
      fail("shape " + shape_text(t.shape) + " of " + t.dtype + " is " +
           std::to_string(static_cast<uint64_t>(bits)) + " bits, not a whole number of bytes");
    u128 need = bits / 8;
    if (need != t.bytes())
      fail(
          span + " hold " + group_thousands(t.bytes()) + " bytes but shape " + shape_text(t.shape) + " of " +
          t.dtype + " needs " +
          (need > UINT64_MAX ? std::string("more than 2^64") : group_thousands(static_cast<uint64_t>(need))));
    if (t.end > h.data_bytes)
      fail(span + " run past the end of the file (the data is " + group_thousands(h.data_bytes) + " bytes)");
    at = t.end;
    prev = &t;
  }
  if (at != h.data_bytes)
    throw Error(file, "the tensors end at data byte " + group_thousands(at) + " but the file holds " +
                          group_thousands(h.data_bytes) + " data bytes (trailing bytes are not allowed)");
  return h;
}

SafetensorsHeader read_safetensors_header(const std::string& path) {
  uint64_t size = file_size(path);
  std::string head = read_file_prefix(path, 8);
  uint64_t n = 0;
  if (head.size() == 8)
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(head[static_cast<size_t>(i)]);
  if (head.size() == 8 && n <= k_max_safetensors_header && 8 + n <= size)
    head = read_file_prefix(path, 8 + n);
  return parse_safetensors_header(head, size, path);
}

SafetensorsIndex parse_safetensors_index(std::string_view json_text, std::string_view file_name) {
  std::string file(file_name);
  if (json_text.size() > k_max_index_bytes)
    throw Error(file, "is larger than " + std::to_string(k_max_index_bytes) + " bytes");
  json j = detail::parse_json_text(json_text, file, "the index");
  if (!j.is_object())
    throw Error(file, "is not a JSON object (expected {\"metadata\": ..., \"weight_map\": ...})");
  SafetensorsIndex idx;
  auto wm = j.find("weight_map");
  if (wm == j.end() || !wm->is_object())
    throw Error(file, "has no \"weight_map\" object (tensor name -> shard file)");
  std::set<std::string> shards;
  for (auto it = wm->begin(); it != wm->end(); ++it) {
    if (!it->is_string() || it->get<std::string>().empty())
      throw Error(
          file, "weight_map " + in_quotes(it.key()) + " is " + detail::json_brief(*it) + ", not a file name");
    idx.weight_map.emplace_back(it.key(), it->get<std::string>());
    shards.insert(it->get<std::string>());
  }
  if (idx.weight_map.empty()) throw Error(file, "weight_map is empty");
  idx.shards.assign(shards.begin(), shards.end());
  auto md = j.find("metadata");
  if (md != j.end() && md->is_object()) {
    auto ts = md->find("total_size");
    if (ts != md->end() && ts->is_number_unsigned())
      idx.total_size = ts->get<uint64_t>();
    else if (ts != md->end() && ts->is_string()) {  // some writers store it as a string
      try {
        idx.total_size = parse_count(file + ": metadata.total_size", ts->get<std::string>());
      } catch (const Error&) {
        throw Error(file, "metadata.total_size " + detail::json_brief(*ts) + " is not a whole number");
      }
    } else if (ts != md->end() && !ts->is_null())
      throw Error(file, "metadata.total_size " + detail::json_brief(*ts) + " is not a whole number");
  }
  return idx;
}

}  // namespace memplan
