#pragma once
// Builds small safetensors and GGUF files byte by byte, for tests, the fuzz seed corpus and the
// benchmark. The sizes here are written from the format specifications (safetensors README,
// ggml-common.h), independently of memplan's own tables.

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

namespace memplan::test {

// ---- safetensors ----

// Bits per element of a safetensors dtype (README "Format"; F4 and F6 are sub-byte).
inline uint64_t st_bits(const std::string& dtype) {
  static const std::map<std::string, uint64_t> bits = {
      {"BOOL", 8}, {"U8", 8},   {"I8", 8},    {"F8_E4M3", 8}, {"F8_E5M2", 8},
      {"I16", 16}, {"F16", 16}, {"BF16", 16}, {"I32", 32},    {"F32", 32},
      {"I64", 64}, {"F64", 64}, {"F4", 4},    {"U64", 64},    {"C64", 64}};
  auto it = bits.find(dtype);
  return it == bits.end() ? 8 : it->second;
}

struct StTensor {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
};

inline std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
  return s;
}

// 8-byte length + header text (as given) + `data_bytes` zero bytes.
inline std::string st_raw(const std::string& header, uint64_t data_bytes) {
  return le64(header.size()) + header + std::string(static_cast<size_t>(data_bytes), '\0');
}

// The header JSON for tensors laid out one after another from offset 0; `data_bytes` gets their
// total. Padded with spaces to a multiple of 8 as the reference writer does.
inline std::string st_header(const std::vector<StTensor>& tensors, uint64_t& data_bytes,
                             const std::string& metadata_json = "") {
  std::string h = "{";
  if (!metadata_json.empty()) h += "\"__metadata__\":" + metadata_json;
  uint64_t at = 0;
  for (const StTensor& t : tensors) {
    uint64_t n = 1;
    std::string shape;
    for (size_t i = 0; i < t.shape.size(); ++i) {
      n *= t.shape[i];
      shape += (i ? "," : "") + std::to_string(t.shape[i]);
    }
    uint64_t bytes = n * st_bits(t.dtype) / 8;
    if (h.size() > 1) h += ",";
    h += "\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[" + shape + "],\"data_offsets\":[" +
         std::to_string(at) + "," + std::to_string(at + bytes) + "]}";
    at += bytes;
  }
  h += "}";
  while (h.size() % 8) h += ' ';
  data_bytes = at;
  return h;
}

// A complete, valid safetensors file.
inline std::string st_file(const std::vector<StTensor>& tensors, const std::string& metadata_json = "") {
  uint64_t data = 0;
  std::string h = st_header(tensors, data, metadata_json);
  return st_raw(h, data);
}

// ---- GGUF ----

// (block elements, bytes per block) of ggml types, from ggml-common.h's block structs.
inline std::pair<uint64_t, uint64_t> gguf_block(uint32_t type) {
  switch (type) {
    case 0:
      return {1, 4};  // F32
    case 1:
      return {1, 2};  // F16
    case 2:
      return {32, 18};  // Q4_0: fp16 scale + 16 bytes of nibbles
    case 8:
      return {32, 34};  // Q8_0: fp16 scale + 32 int8
    case 12:
      return {256, 144};  // Q4_K: 2 fp16 + 12 bytes scales + 128 bytes of nibbles
    case 14:
      return {256, 210};  // Q6_K: 128 + 64 + 16 + fp16
    case 16:
      return {256, 66};  // IQ2_XXS: fp16 + 32 uint16
    case 30:
      return {1, 2};  // BF16
    default:
      return {1, 1};
  }
}

// A GGUF byte stream written field by field (little-endian).
struct GgufBytes {
  std::string b;
  GgufBytes& u8(uint8_t v) {
    b += static_cast<char>(v);
    return *this;
  }
  GgufBytes& u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) u8(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  GgufBytes& u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) u8(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  GgufBytes& str(const std::string& s) {
    u64(s.size());
    b += s;
    return *this;
  }
  GgufBytes& kv_u32(const std::string& k, uint32_t v) {
    str(k).u32(4).u32(v);
    return *this;
  }
  GgufBytes& kv_u64(const std::string& k, uint64_t v) {
    str(k).u32(10).u64(v);
    return *this;
  }
  GgufBytes& kv_f32(const std::string& k, float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    str(k).u32(6).u32(bits);
    return *this;
  }
  GgufBytes& kv_str(const std::string& k, const std::string& v) {
    str(k).u32(8).str(v);
    return *this;
  }
  GgufBytes& kv_strings(const std::string& k, const std::vector<std::string>& v) {
    str(k).u32(9).u32(8).u64(v.size());
    for (const std::string& s : v) str(s);
    return *this;
  }
  GgufBytes& tensor_info(const std::string& name, const std::vector<uint64_t>& dims, uint32_t type,
                         uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(dims.size()));
    for (uint64_t d : dims) u64(d);
    u32(type).u64(offset);
    return *this;
  }
  // Zero padding up to a multiple of `a`.
  GgufBytes& pad(uint64_t a) {
    while (b.size() % a) b += '\0';
    return *this;
  }
};

struct GgTensor {
  std::string name;
  std::vector<uint64_t> dims;  // ggml order: dims[0] = row length
  uint32_t type;
};

inline uint64_t gguf_tensor_bytes(const GgTensor& t) {
  uint64_t n = 1;
  for (uint64_t d : t.dims) n *= d;
  auto [block, size] = gguf_block(t.type);
  return n / block * size;
}

// A complete GGUF v3 file: header, `kv` (already-encoded key/values, `n_kv` of them), tensor
// infos with offsets laid out at 32-byte alignment, padding, zero data.
inline std::string gguf_file(const GgufBytes& kv, uint64_t n_kv, const std::vector<GgTensor>& tensors,
                             uint64_t alignment = 32) {
  GgufBytes g;
  g.u32(0x46554747).u32(3).u64(tensors.size()).u64(n_kv);
  g.b += kv.b;
  uint64_t at = 0;
  for (const GgTensor& t : tensors) {
    g.tensor_info(t.name, t.dims, t.type, at);
    at += gguf_tensor_bytes(t);
    at = (at + alignment - 1) / alignment * alignment;
  }
  g.pad(alignment);
  uint64_t data_end = 0, off = 0;
  for (const GgTensor& t : tensors) {
    data_end = off + gguf_tensor_bytes(t);
    off = (data_end + alignment - 1) / alignment * alignment;
  }
  g.b += std::string(static_cast<size_t>(data_end), '\0');
  return g.b;
}

// ---- files ----

// A fresh temporary directory, removed with its contents at the end of the scope.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag) {
    path = std::filesystem::temp_directory_path() / ("memplan_" + tag + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
  // Writes `bytes` to `name` in the directory and returns its path.
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream out(file(name), std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return file(name);
  }
};

}  // namespace memplan::test
