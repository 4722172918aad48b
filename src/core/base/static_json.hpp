#pragma once
// A JSON document converted into constant C++ data at build time (cmake/embed.cmake writes one
// for each embedded file), so that reading the embedded presets parses nothing at run time.
// Its questions are nlohmann::json's, so one reader can take either.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace memplan {

struct StaticJson {
  enum class Type : unsigned char {
    null,
    boolean,
    number_unsigned,
    number_integer,
    number_float,
    string,
    array,
    object
  };

  Type type = Type::null;
  std::string_view key;   // the member's name, in an object
  std::string_view text;  // a string's value
  bool boolean_value = false;
  uint64_t unsigned_value = 0;
  int64_t integer_value = 0;
  double float_value = 0.0;
  const StaticJson* items = nullptr;  // an array's elements or an object's members
  std::size_t count = 0;

  bool is_null() const { return type == Type::null; }
  bool is_boolean() const { return type == Type::boolean; }
  bool is_number_unsigned() const { return type == Type::number_unsigned; }
  // As nlohmann::json: unsigned numbers are integers too.
  bool is_number_integer() const { return type == Type::number_unsigned || type == Type::number_integer; }
  bool is_number() const { return is_number_integer() || type == Type::number_float; }
  bool is_string() const { return type == Type::string; }
  bool is_array() const { return type == Type::array; }
  bool is_object() const { return type == Type::object; }

  std::size_t size() const { return count; }
  const StaticJson* begin() const { return items; }
  const StaticJson* end() const { return items + count; }
  const StaticJson& operator[](std::size_t i) const { return items[i]; }
  // The member named `name` of an object, or nullptr.
  const StaticJson* find(std::string_view name) const {
    if (type != Type::object) return nullptr;
    for (const StaticJson& m : *this)
      if (m.key == name) return &m;
    return nullptr;
  }

  double number() const {
    switch (type) {
      case Type::number_unsigned:
        return static_cast<double>(unsigned_value);
      case Type::number_integer:
        return static_cast<double>(integer_value);
      default:
        return float_value;
    }
  }
};

// The constructors the generated files use.
namespace static_json {
constexpr StaticJson null(std::string_view key) {
  StaticJson j;
  j.key = key;
  return j;
}
constexpr StaticJson boolean(std::string_view key, bool v) {
  StaticJson j = null(key);
  j.type = StaticJson::Type::boolean;
  j.boolean_value = v;
  return j;
}
constexpr StaticJson number_unsigned(std::string_view key, unsigned long long v) {
  StaticJson j = null(key);
  j.type = StaticJson::Type::number_unsigned;
  j.unsigned_value = v;
  return j;
}
constexpr StaticJson number_integer(std::string_view key, long long v) {
  StaticJson j = null(key);
  j.type = StaticJson::Type::number_integer;
  j.integer_value = v;
  return j;
}
constexpr StaticJson number_float(std::string_view key, double v) {
  StaticJson j = null(key);
  j.type = StaticJson::Type::number_float;
  j.float_value = v;
  return j;
}
constexpr StaticJson string(std::string_view key, std::string_view v) {
  StaticJson j = null(key);
  j.type = StaticJson::Type::string;
  j.text = v;
  return j;
}
constexpr StaticJson array(std::string_view key, const StaticJson* items, std::size_t count) {
  StaticJson j = null(key);
  j.type = StaticJson::Type::array;
  j.items = items;
  j.count = count;
  return j;
}
constexpr StaticJson object(std::string_view key, const StaticJson* items, std::size_t count) {
  StaticJson j = array(key, items, count);
  j.type = StaticJson::Type::object;
  return j;
}
}  // namespace static_json

}  // namespace memplan
