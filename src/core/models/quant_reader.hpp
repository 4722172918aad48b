#pragma once
// What the readers of quantization_config share (quantization_config.cpp and the files of its
// larger methods): a reader naming "<file>: quantization_config.<key>" in errors, checked byte
// arithmetic, and the scheme one method gives a quantised matrix.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"
#include "core/base/json_text.hpp"
#include "core/base/text.hpp"
#include "core/models/quantization_config.hpp"

namespace memplan::detail::quant {

inline constexpr const char* k_what = "quantised weight bytes";

inline uint64_t mul(uint64_t a, uint64_t b) { return checked_mul(a, b, k_what); }
inline uint64_t add(uint64_t a, uint64_t b) { return checked_add(a, b, k_what); }

// Reads quantization_config's fields, naming "<file>: quantization_config.<key>" in errors.
class QuantReader {
 public:
  QuantReader(const nlohmann::json& q, std::string file) : m_q(q), m_file(std::move(file)) {}

  std::string subject(const std::string& key) const { return m_file + ": quantization_config." + key; }
  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw Error(subject(key), message);
  }
  const nlohmann::json* find(const char* key) const {
    auto it = m_q.find(key);
    return it == m_q.end() || it->is_null() ? nullptr : &*it;
  }
  std::optional<std::string> text(const char* key) const {
    const nlohmann::json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) fail(key, json_brief(*v) + " is not a string");
    return v->get<std::string>();
  }
  bool flag(const char* key, bool fallback) const {
    const nlohmann::json* v = find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) fail(key, json_brief(*v) + " is not true or false");
    return v->get<bool>();
  }
  // A whole number; -1 (GPTQ's "no groups") is returned as nullopt through `minus_one`.
  std::optional<uint64_t> count(const char* key, bool* minus_one = nullptr) const {
    const nlohmann::json* v = find(key);
    if (!v) return std::nullopt;
    if (v->is_number_integer() && v->get<int64_t>() == -1 && minus_one) {
      *minus_one = true;
      return std::nullopt;
    }
    if (!v->is_number_unsigned() || v->get<uint64_t>() == 0 || v->get<uint64_t>() > (1ull << 32))
      fail(key, json_brief(*v) + " is not a whole number from 1 to 2^32");
    return v->get<uint64_t>();
  }
  std::vector<std::string> names(const char* key) const {
    std::vector<std::string> out;
    const nlohmann::json* v = find(key);
    if (!v) return out;
    if (!v->is_array()) fail(key, json_brief(*v) + " is not a list of module names");
    for (const nlohmann::json& e : *v) {
      if (!e.is_string()) fail(key, json_brief(e) + " is not a module name");
      out.push_back(e.get<std::string>());
    }
    return out;
  }
  const nlohmann::json& json() const { return m_q; }
  const std::string& file() const { return m_file; }

 private:
  const nlohmann::json& m_q;
  std::string m_file;
};

inline std::string int_format(uint64_t bits) {
  return bits == 8 ? "int8" : bits == 4 ? "int4" : "int" + to_s(bits);
}

// How one quantised matrix is stored: bytes of its tensors, from in, out.
struct Scheme {
  std::string format;                                        // storage format of the codes
  std::function<uint64_t(uint64_t in, uint64_t out)> bytes;  // all tensors of one matrix
  std::function<bool(const LinearGroup&, const std::string& module)> quantized;  // packed or not
};

// compressed-tensors (quantization_config_compressed_tensors.cpp). other_format / other_bytes_per:
// what the unquantised tensors are stored in.
Scheme compressed_tensors(const QuantReader& q, const std::string& other_format, uint64_t other_bytes_per,
                          std::vector<std::string>& notes);

}  // namespace memplan::detail::quant
