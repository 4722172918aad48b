#include "core/models/gguf.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include <memplan/quantity.hpp>
#include "core/base/checked.hpp"
#include "core/base/file_reader.hpp"
#include "core/base/json_text.hpp"

namespace memplan {
namespace {

using nlohmann::json;

constexpr uint32_t k_magic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint64_t k_max_dims = 4;        // GGML_MAX_DIMS
constexpr uint64_t k_max_name = 64;       // GGML_MAX_NAME (with its NUL)
constexpr uint64_t k_max_key = 65535;
constexpr uint64_t k_array_shown = 64;  // longer arrays are summarised

enum ValueType : uint32_t {
  t_u8 = 0,
  t_i8,
  t_u16,
  t_i16,
  t_u32,
  t_i32,
  t_f32,
  t_bool,
  t_string,
  t_array,
  t_u64,
  t_i64,
  t_f64,
  t_count
};
const char* const k_value_type_names[] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                          "int32",  "float32", "bool",   "string", "array",
                                          "uint64", "int64",   "float64"};
const uint64_t k_value_size[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

// Reads little-endian fields from the bytes read so far; asks for more, or fails, at their end.
class Cursor {
 public:
  Cursor(std::string_view b, uint64_t file_size, const std::string& file)
      : m_b(b), m_size(file_size), m_file(file) {}

  uint64_t pos() const { return m_pos; }

  void need(uint64_t n, const std::string& what) {
    if (n <= m_b.size() - m_pos) return;
    bool in_file = n <= m_size - std::min<uint64_t>(m_pos, m_size);
    if (in_file && m_pos + n > k_max_gguf_header)
      throw Error(m_file, "the header is larger than the " + group_thousands(k_max_gguf_header) +
                              "-byte limit (at " + what + ")");
    if (in_file && m_b.size() < m_size) throw GgufNeedMore(m_file, "read more of the file (at " + what + ")");
    throw Error(m_file, "truncated at byte " + group_thousands(m_pos) + " while reading " + what + " (" +
                            group_thousands(n) + " bytes needed, the file has " + group_thousands(m_size) +
                            ")");
  }
  uint64_t uint(unsigned bytes, const std::string& what) {
    need(bytes, what);
    uint64_t v = 0;
    for (unsigned i = bytes; i-- > 0;)
      v = (v << 8) | static_cast<unsigned char>(m_b[static_cast<size_t>(m_pos + i)]);
    m_pos += bytes;
    return v;
  }
  uint32_t u32(const std::string& what) { return static_cast<uint32_t>(uint(4, what)); }
  uint64_t u64(const std::string& what) { return uint(8, what); }
  std::string str(const std::string& what, uint64_t max_len) {
    uint64_t n = u64(what + " length");
    if (n > max_len)
      throw Error(m_file, what + " is " + group_thousands(n) + " bytes long (at most " +
                              group_thousands(max_len) + ")");
    need(n, what);
    std::string s(m_b.substr(static_cast<size_t>(m_pos), static_cast<size_t>(n)));
    m_pos += n;
    return s;
  }
  void skip(uint64_t n, const std::string& what) {
    need(n, what);
    m_pos += n;
  }
  // Fails unless `count` items of at least `min_size` bytes each can fit in the rest of the file.
  void check_count(uint64_t count, uint64_t min_size, const std::string& what) {
    u128 need_bytes = static_cast<u128>(count) * min_size;
    if (need_bytes > m_size - std::min<uint64_t>(m_pos, m_size))
      throw Error(m_file, what + " " + group_thousands(count) + " cannot fit in the " +
                              group_thousands(m_size - std::min<uint64_t>(m_pos, m_size)) +
                              " bytes left in the file");
  }

 private:
  std::string_view m_b;
  uint64_t m_pos = 0;
  uint64_t m_size;
  const std::string& m_file;
};

json scalar(Cursor& c, uint32_t type, const std::string& what) {
  switch (type) {
    case t_u8:
      return c.uint(1, what);
    case t_i8:
      return static_cast<int8_t>(c.uint(1, what));
    case t_u16:
      return c.uint(2, what);
    case t_i16:
      return static_cast<int16_t>(c.uint(2, what));
    case t_u32:
      return c.uint(4, what);
    case t_i32:
      return static_cast<int32_t>(c.uint(4, what));
    case t_u64:
      return c.uint(8, what);
    case t_i64:
      return static_cast<int64_t>(c.uint(8, what));
    case t_bool:
      return c.uint(1, what) != 0;
    case t_f32: {
      uint32_t bits = static_cast<uint32_t>(c.uint(4, what));
      float f;
      std::memcpy(&f, &bits, 4);
      return static_cast<double>(f);
    }
    case t_f64: {
      uint64_t bits = c.uint(8, what);
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    }
    default:
      return c.str(what, UINT64_MAX);
  }
}

json value(Cursor& c, uint32_t type, const std::string& key, const std::string& file) {
  std::string what = "the value of \"" + key + "\"";
  if (type >= t_count)
    throw Error(file, "metadata \"" + key + "\" has unknown value type " + std::to_string(type));
  if (type != t_array) return scalar(c, type, what);
  uint32_t elem = c.u32(what);
  if (elem >= t_count)
    throw Error(file, "metadata \"" + key + "\" is an array of unknown type " + std::to_string(elem));
  if (elem == t_array)
    throw Error(file, "metadata \"" + key + "\" is an array of arrays (not supported, as in ggml)");
  uint64_t n = c.u64(what);
  c.check_count(n, elem == t_string ? 8 : k_value_size[elem], "metadata \"" + key + "\": array length");
  if (n > k_array_shown) {  // summarise: skip without building values
    if (elem == t_string)
      for (uint64_t i = 0; i < n; ++i) c.skip(c.u64(what), what);
    else
      c.skip(n * k_value_size[elem], what);
    return json{{"array", k_value_type_names[elem]}, {"length", n}};
  }
  json arr = json::array();
  for (uint64_t i = 0; i < n; ++i) arr.push_back(scalar(c, elem, what));
  return arr;
}

}  // namespace

const std::vector<GgufType>& gguf_types() {
  // ggml-common.h block structs and ggml.c type_traits (ggml @d99724f).
  static const std::vector<GgufType> table = {
      {0, "F32", 1, 4, "fp32"},     {1, "F16", 1, 2, "fp16"},     {2, "Q4_0", 32, 18, ""},
      {3, "Q4_1", 32, 20, ""},      {6, "Q5_0", 32, 22, ""},      {7, "Q5_1", 32, 24, ""},
      {8, "Q8_0", 32, 34, ""},      {9, "Q8_1", 32, 36, ""},      {10, "Q2_K", 256, 84, ""},
      {11, "Q3_K", 256, 110, ""},   {12, "Q4_K", 256, 144, ""},   {13, "Q5_K", 256, 176, ""},
      {14, "Q6_K", 256, 210, ""},   {15, "Q8_K", 256, 292, ""},   {16, "IQ2_XXS", 256, 66, ""},
      {17, "IQ2_XS", 256, 74, ""},  {18, "IQ3_XXS", 256, 98, ""}, {19, "IQ1_S", 256, 50, ""},
      {20, "IQ4_NL", 32, 18, ""},   {21, "IQ3_S", 256, 110, ""},  {22, "IQ2_S", 256, 82, ""},
      {23, "IQ4_XS", 256, 136, ""}, {24, "I8", 1, 1, "int8"},     {25, "I16", 1, 2, ""},
      {26, "I32", 1, 4, ""},        {27, "I64", 1, 8, ""},        {28, "F64", 1, 8, "fp64"},
      {29, "IQ1_M", 256, 56, ""},   {30, "BF16", 1, 2, "bf16"},   {34, "TQ1_0", 256, 54, ""},
      {35, "TQ2_0", 256, 66, ""},   {39, "MXFP4", 32, 17, ""},    {40, "NVFP4", 64, 36, ""},
      {41, "Q1_0", 128, 18, ""},    {42, "Q2_0", 64, 18, ""},
  };
  return table;
}

const GgufType* find_gguf_type(uint32_t id) {
  for (const GgufType& t : gguf_types())
    if (t.id == id) return &t;
  return nullptr;
}

GgufFile parse_gguf(std::string_view bytes, uint64_t file_size, std::string_view file_name) {
  GgufFile g;
  g.file = file_name;
  g.file_size = file_size;
  const std::string& file = g.file;
  if (bytes.size() > file_size) bytes = bytes.substr(0, static_cast<size_t>(file_size));
  Cursor c(bytes, file_size, file);
  if (c.u32("the magic") != k_magic)
    throw Error(file, "is not a GGUF file (it does not start with \"GGUF\")");
  g.version = c.u32("the version");
  if (g.version == 1)
    throw Error(file, "is GGUF version 1 (32-bit counts), which memplan does not read; re-convert it");
  if (g.version > 3 && (g.version & 0xFFFF) == 0)
    throw Error(file, "is a big-endian GGUF file (version " + std::to_string(g.version) +
                          " byte-swapped); memplan reads little-endian files");
  if (g.version > 3)
    throw Error(file, "is GGUF version " + std::to_string(g.version) + " (memplan reads versions 2 and 3)");
  uint64_t n_tensors = c.u64("the tensor count");
  uint64_t n_kv = c.u64("the metadata count");
  c.check_count(n_kv, 8 + 4 + 1, "metadata count");
  c.check_count(n_tensors, 8 + 4 + 4 + 8, "tensor count");

  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = c.str("metadata key " + std::to_string(i), k_max_key);
    uint32_t type = c.u32("the type of \"" + key + "\"");
    json v = value(c, type, key, file);
    if (g.metadata.contains(key)) throw Error(file, "metadata key \"" + key + "\" appears twice");
    if (key == "general.alignment") {
      if (type != t_u32)
        throw Error(file, "general.alignment is a " +
                              std::string(type < t_count ? k_value_type_names[type] : "?") +
                              " (expected uint32)");
      uint64_t a = v.get<uint64_t>();
      if (a == 0 || (a & (a - 1)) != 0)
        throw Error(file, "general.alignment " + std::to_string(a) + " is not a power of 2");
      g.alignment = a;
    }
    g.metadata[key] = std::move(v);
  }

  std::set<std::string> names;
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensor t;
    // The length is checked before the name is read: a 500 MB name costs nothing.
    t.name = c.str("tensor " + std::to_string(i) + " name", k_max_name - 1);
    const std::string shown = detail::printable(t.name);
    auto fail = [&](const std::string& msg) { throw Error(file, "tensor \"" + shown + "\": " + msg); };
    if (!names.insert(t.name).second) fail("appears twice");
    uint32_t n_dims = c.u32("tensor \"" + shown + "\" dimensions");
    if (n_dims > k_max_dims) fail(std::to_string(n_dims) + " dimensions (at most 4)");
    t.elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      t.dims.push_back(c.u64("tensor \"" + shown + "\" shape"));
      u128 p = static_cast<u128>(t.elements) * t.dims.back();
      if (t.dims.back() > INT64_MAX || p > INT64_MAX) fail("shape has more than 2^63 elements");
      t.elements = static_cast<uint64_t>(p);
    }
    t.type = c.u32("tensor \"" + shown + "\" type");
    const GgufType* ty = find_gguf_type(t.type);
    if (!ty) fail("unknown ggml type " + std::to_string(t.type) + " (a newer llama.cpp type?)");
    if (!t.dims.empty() && t.dims[0] % ty->block != 0)
      fail("rows of " + std::to_string(t.dims[0]) + " are not a multiple of " + ty->name + "'s block of " +
           std::to_string(ty->block));
    if (t.elements % ty->block != 0)
      fail(std::string("element count is not a multiple of ") + ty->name + "'s block");
    t.bytes = checked_mul(t.elements / ty->block, ty->type_size, "GGUF tensor bytes");
    t.offset = c.u64("tensor \"" + shown + "\" offset");
    g.tensors.push_back(std::move(t));
  }

  // Tensor data starts at the next multiple of the alignment; each tensor is padded to it.
  const uint64_t a = g.alignment;
  g.data_offset = checked_mul((c.pos() + a - 1) / a, a, "GGUF data offset");
  uint64_t expected = 0;
  for (const GgufTensor& t : g.tensors) {
    auto fail = [&](const std::string& msg) {
      throw Error(file, "tensor \"" + detail::printable(t.name) + "\": " + msg);
    };
    if (t.offset != expected)
      fail("offset " + group_thousands(t.offset) + " is not where the previous tensor ends (" +
           group_thousands(expected) + ")");
    uint64_t end = checked_add(t.offset, t.bytes, "GGUF tensor end");
    if (checked_add(g.data_offset, end, "GGUF tensor end") > file_size)
      fail("its " + group_thousands(t.bytes) + " bytes at data offset " + group_thousands(t.offset) +
           " run past the end of the file (" + group_thousands(file_size) + " bytes)");
    expected = checked_mul((end + a - 1) / a, a, "GGUF tensor end");
    g.data_end = g.data_offset + end;
  }
  if (g.tensors.empty()) g.data_end = std::min(g.data_offset, file_size);
  return g;
}

GgufFile read_gguf_file(const std::string& path) {
  uint64_t size = file_size(path);
  uint64_t n = 1u << 20;
  for (;;) {
    std::string bytes = read_file_prefix(path, n);
    try {
      return parse_gguf(bytes, size, path);
    } catch (const GgufNeedMore&) {
      if (n >= size || n >= k_max_gguf_header)
        throw Error(path, "the GGUF header does not fit in the bytes read");
      n = std::min(n * 4, k_max_gguf_header);
    }
  }
}

std::vector<GgufTypeTotal> gguf_type_totals(const GgufFile& g) {
  std::vector<GgufTypeTotal> out;
  for (const GgufTensor& t : g.tensors) {
    const char* name = find_gguf_type(t.type)->name;
    auto it = std::find_if(out.begin(), out.end(), [&](const GgufTypeTotal& x) { return x.type == name; });
    if (it == out.end()) it = out.insert(out.end(), GgufTypeTotal{name, 0, 0, 0});
    it->tensors += 1;
    it->elements = checked_add(it->elements, t.elements, "GGUF elements");
    it->bytes = checked_add(it->bytes, t.bytes, "GGUF bytes");
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const GgufTypeTotal& x, const GgufTypeTotal& y) { return x.bytes > y.bytes; });
  return out;
}

ModelSpec read_gguf(const std::string& path) { return model_spec_of(read_gguf_file(path)); }

}  // namespace memplan
