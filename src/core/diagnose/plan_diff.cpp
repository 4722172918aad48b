#include "core/diagnose/plan_diff.hpp"

#include <limits>

#include <memplan/error.hpp>

namespace memplan {

namespace {

int64_t as_signed(uint64_t v) {
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw Error("diff", "a byte count above 2^63 cannot be compared");
  return static_cast<int64_t>(v);
}

const DiffSide::Term* find_term(const DiffSide& s, const std::string& name) {
  for (const DiffSide::Term& t : s.terms)
    if (t.name == name) return &t;
  return nullptr;
}

const DiffSide::Gpu* find_gpu(const DiffSide& s, const std::string& id) {
  for (const DiffSide::Gpu& g : s.gpus)
    if (g.id == id) return &g;
  return nullptr;
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
  if (!old_side.terms.empty() && !new_side.terms.empty()) {
    for (const DiffSide::Term& t : old_side.terms) {
      const DiffSide::Term* n = find_term(new_side, t.name);
      d.terms.push_back({t.name, t.bytes, n ? std::optional<uint64_t>(n->bytes) : std::nullopt});
    }
    for (const DiffSide::Term& t : new_side.terms)
      if (!find_term(old_side, t.name)) d.terms.push_back({t.name, std::nullopt, t.bytes});
  }
  d.total = {"total", old_side.total_bytes, new_side.total_bytes};
  d.required = {"required", old_side.required_bytes, new_side.required_bytes};
  for (const DiffSide::Gpu& g : old_side.gpus) {
    const DiffSide::Gpu* n = find_gpu(new_side, g.id);
    d.gpus.push_back({g.id, g, n ? std::optional<DiffSide::Gpu>(*n) : std::nullopt});
  }
  for (const DiffSide::Gpu& g : new_side.gpus)
    if (!find_gpu(old_side, g.id)) d.gpus.push_back({g.id, std::nullopt, g});
  // Changes are checked once here so a renderer never meets an overflow.
  for (const BytesChange& t : d.terms) (void)t.change_bytes();
  (void)d.total.change_bytes();
  (void)d.required.change_bytes();
  return d;
}

}  // namespace memplan
