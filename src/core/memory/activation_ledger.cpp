#include "core/memory/activation_ledger.hpp"

#include <cctype>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"
#include "core/base/did_you_mean.hpp"
#include "core/base/text.hpp"

namespace memplan {
namespace detail {

uint64_t count_entry(Entries& out, const Dims& dims, const Fmt& fmt, Role role) {
  uint64_t elements = 1;
  for (uint8_t i = 0; i < dims.n; ++i) elements = checked_mul(elements, dims.d[i], "activation elements");
  const uint64_t bytes = bytes_for(elements, fmt.cost, "activation bytes");
  uint64_t& sum = out.per_role[static_cast<size_t>(role)];
  sum = checked_add(sum, bytes, "activation bytes");
  return bytes;
}

void Entries::set_role(Role role) {
  uint64_t all = 0;
  for (uint64_t b : per_role) all = checked_add(all, b, "activation bytes");
  per_role = {};
  per_role[static_cast<size_t>(role)] = all;
  for (Entry& e : rows) e.role = role;
}

void Entries::append(const Entries& other) {
  for (size_t i = 0; i < per_role.size(); ++i)
    per_role[i] = checked_add(per_role[i], other.per_role[i], "activation bytes");
  rows.insert(rows.end(), other.rows.begin(), other.rows.end());
}

uint64_t per_sample_bytes(const Entries& entries, Role role) {
  return entries.per_role[static_cast<size_t>(role)];
}

std::vector<SavedTensor> to_rows(const Entries& entries, uint64_t batch) {
  std::vector<SavedTensor> rows;
  rows.reserve(entries.rows.size());
  for (const Entry& e : entries.rows) {
    std::string shape = std::to_string(batch);
    for (uint8_t i = 0; i < e.dims.n; ++i) shape += " x " + std::to_string(e.dims.d[i]);
    rows.push_back(
        SavedTensor{e.name, shape, e.fmt.name, checked_mul(batch, e.per_sample, "activation bytes"), e.role});
  }
  return rows;
}

}  // namespace detail

// The CLI's wording since 0.1: "is not valid (expected ...)".
Attention parse_attention(std::string_view subject, std::string_view text) {
  std::string key = to_lower(text);
  if (key == "eager" || key == "math") return Attention::eager;
  if (key == "sdpa" || key == "flash" || key == "fused") return Attention::sdpa;
  throw Error(std::string(subject), "\"" + std::string(text) + "\" is not valid (expected eager or sdpa" +
                                        did_you_mean(text, {"eager", "sdpa", "flash", "fused", "math"}) +
                                        ")");
}

Checkpointing parse_checkpointing(std::string_view subject, std::string_view text) {
  std::string key = to_lower(text);
  if (key == "none" || key == "off") return Checkpointing::none;
  if (key == "selective") return Checkpointing::selective;
  if (key == "full") return Checkpointing::full;
  throw Error(std::string(subject), "\"" + std::string(text) +
                                        "\" is not valid (expected none, selective or full" +
                                        did_you_mean(text, {"none", "selective", "full"}) + ")");
}

const char* to_string(Attention a) { return a == Attention::eager ? "eager" : "sdpa"; }

const char* to_string(Checkpointing c) {
  switch (c) {
    case Checkpointing::none:
      return "none";
    case Checkpointing::selective:
      return "selective";
    case Checkpointing::full:
      return "full";
  }
  return "none";
}

const char* to_string(Role r) {
  switch (r) {
    case Role::saved:
      return "saved";
    case Role::held:
      return "held";
    case Role::recomputed:
      return "recomputed";
  }
  return "saved";
}

}  // namespace memplan
