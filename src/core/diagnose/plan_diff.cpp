#include "core/diagnose/plan_diff.hpp"

#include <limits>
#include <string_view>
#include <unordered_map>

#include <memplan/error.hpp>

namespace memplan {

namespace {

int64_t as_signed(uint64_t v) {
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw Error("diff", "a byte count above 2^63 cannot be compared");
  return static_cast<int64_t>(v);
}

// Name -> position, so a side of 100,000 breakdown keys or fit rows is matched in one pass (issue 32:
// a rescan per key was quadratic). The first of a repeated name wins, as the rescan did.
template <typename Item, typename Key>
std::unordered_map<std::string_view, const Item*> index_of(const std::vector<Item>& items, Key key) {
  std::unordered_map<std::string_view, const Item*> at;
  at.reserve(items.size());
  for (const Item& i : items) at.emplace(key(i), &i);
  return at;
}

template <typename Map>
auto lookup(const Map& m, const std::string& k) -> typename Map::mapped_type {
  const auto it = m.find(k);
  return it == m.end() ? nullptr : it->second;
}

bool fitted(Verdict v) { return v != Verdict::no; }

}  // namespace

int64_t BytesChange::change_bytes() const {
  return as_signed(new_bytes.value_or(0)) - as_signed(old_bytes.value_or(0));
}

bool GpuChange::became_no_fit() const {
  return old_gpu && new_gpu && fitted(old_gpu->verdict) && !fitted(new_gpu->verdict);
}

bool GpuChange::verdict_changed() const {
  if (!old_gpu || !new_gpu) return true;
  return old_gpu->verdict != new_gpu->verdict;
}

bool PlanDiff::any_became_no_fit() const {
  for (const GpuChange& g : gpus)
    if (g.became_no_fit()) return true;
  return false;
}

PlanDiff diff_plans(const DiffSide& old_side, const DiffSide& new_side) {
  PlanDiff d;
  const auto term_name = [](const DiffSide::Term& t) { return std::string_view(t.name); };
  const auto gpu_id = [](const DiffSide::Gpu& g) { return std::string_view(g.id); };
  if (!old_side.terms.empty() && !new_side.terms.empty()) {
    const auto old_terms = index_of(old_side.terms, term_name);
    const auto new_terms = index_of(new_side.terms, term_name);
    for (const DiffSide::Term& t : old_side.terms) {
      const DiffSide::Term* n = lookup(new_terms, t.name);
      d.terms.push_back({t.name, t.bytes, n ? std::optional<uint64_t>(n->bytes) : std::nullopt});
    }
    for (const DiffSide::Term& t : new_side.terms)
      if (!lookup(old_terms, t.name)) d.terms.push_back({t.name, std::nullopt, t.bytes});
  }
  d.total = {"total", old_side.total_bytes, new_side.total_bytes};
  d.required = {"required", old_side.required_bytes, new_side.required_bytes};
  const auto old_gpus = index_of(old_side.gpus, gpu_id);
  const auto new_gpus = index_of(new_side.gpus, gpu_id);
  for (const DiffSide::Gpu& g : old_side.gpus) {
    const DiffSide::Gpu* n = lookup(new_gpus, g.id);
    d.gpus.push_back({g.id, g, n ? std::optional<DiffSide::Gpu>(*n) : std::nullopt});
  }
  for (const DiffSide::Gpu& g : new_side.gpus)
    if (!lookup(old_gpus, g.id)) d.gpus.push_back({g.id, std::nullopt, g});
  // Changes are checked once here so a renderer never meets an overflow.
  for (const BytesChange& t : d.terms) (void)t.change_bytes();
  (void)d.total.change_bytes();
  (void)d.required.change_bytes();
  return d;
}

}  // namespace memplan
