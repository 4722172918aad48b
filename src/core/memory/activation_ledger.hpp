#pragma once
// Internal helpers shared by the MLP and transformer activation models: ledger entries kept
// per sample (so batch linearity is exact) and turned into SavedTensor rows at the end.

#include <cstdint>
#include <string>
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

// One ledger row for ONE sample: dims exclude the batch dimension.
struct Entry {
  std::string name;
  std::vector<uint64_t> dims;
  Fmt fmt;
  Role role = Role::saved;
  uint64_t per_sample = 0;  // bytes for one sample
};
using Entries = std::vector<Entry>;

// Appends an entry of product(dims) elements at fmt.
void add_entry(Entries& out, std::string name, std::vector<uint64_t> dims, const Fmt& fmt,
               Role role = Role::saved);

// Sum of per-sample bytes of the entries with this role.
uint64_t per_sample_bytes(const Entries& entries, Role role);

// SavedTensor rows for `batch` samples: shape "batch x d1 x d2", bytes = batch x per_sample.
std::vector<SavedTensor> to_rows(const Entries& entries, uint64_t batch);

}  // namespace memplan::detail
