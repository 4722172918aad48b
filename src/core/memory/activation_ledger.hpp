#pragma once
// Internal helpers shared by the MLP and transformer activation models: ledger entries kept
// per sample (so batch linearity is exact) and turned into SavedTensor rows at the end.
// Entries that do not record (estimate()'s hot path) only sum bytes by role: names are
// callables evaluated when recording, so counting builds no string.

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include <memplan/storage_format.hpp>
#include "core/memory/activations.hpp"

namespace memplan::detail {

// A named element format: "bf16" at 2 bytes.
struct Fmt {
  std::string name;
  ElementCost cost;
};

inline const Fmt& fp32_fmt() {
  static const Fmt f{"fp32", {4, 1}};
  return f;
}

// A shape without the batch dimension (at most 4 dimensions).
struct Dims {
  std::array<uint64_t, 4> d{};
  uint8_t n = 0;
  Dims(std::initializer_list<uint64_t> dims) {
    for (uint64_t x : dims)
      if (n < d.size()) d[n++] = x;
  }
};

// One ledger row for ONE sample: dims exclude the batch dimension.
struct Entry {
  std::string name;
  Dims dims;
  Fmt fmt;
  Role role = Role::saved;
  uint64_t per_sample = 0;  // bytes for one sample
};

// The entries of one part of the model; rows only when recording.
struct Entries {
  bool record = true;
  std::vector<Entry> rows;
  std::array<uint64_t, 3> per_role{};  // per-sample bytes by Role

  // Every entry becomes `role` (full checkpointing recomputes the whole layer).
  void set_role(Role role);
  // Appends `other` after these entries.
  void append(const Entries& other);
};

// Per-sample bytes of product(dims) elements at fmt, added to `out` under `role`.
uint64_t count_entry(Entries& out, const Dims& dims, const Fmt& fmt, Role role);

// Appends an entry named name() (a callable returning std::string, called only when recording).
template <class Name, std::enable_if_t<std::is_invocable_r_v<std::string, Name>, int> = 0>
void add_entry(Entries& out, Name&& name, const Dims& dims, const Fmt& fmt, Role role = Role::saved) {
  const uint64_t bytes = count_entry(out, dims, fmt, role);
  if (out.record) out.rows.push_back(Entry{name(), dims, fmt, role, bytes});
}

// Appends an entry with a fixed name.
inline void add_entry(Entries& out, const char* name, const Dims& dims, const Fmt& fmt,
                      Role role = Role::saved) {
  add_entry(
      out, [name] { return std::string(name); }, dims, fmt, role);
}

// Sum of per-sample bytes of the entries with this role.
uint64_t per_sample_bytes(const Entries& entries, Role role);

// SavedTensor rows for `batch` samples: shape "batch x d1 x d2", bytes = batch x per_sample.
std::vector<SavedTensor> to_rows(const Entries& entries, uint64_t batch);

}  // namespace memplan::detail
