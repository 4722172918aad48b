// The estimate as plain values: terms by kind with their structured arithmetic, notes as codes,
// and estimate() without a heap allocation on its hot paths (a counting operator new).
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>

#include <memplan/estimate.hpp>
#include <memplan/presets.hpp>

namespace {
std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_allocations{0};
}  // namespace

// Counts allocations while g_counting is set; the whole test binary uses it. Every plain form of
// new and delete (single, array, nothrow) is replaced, so each pair meets in malloc/free: under
// AddressSanitizer a form left to the runtime would be freed here and reported as a mismatch.
namespace {
void* counted_malloc(std::size_t n) noexcept {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
}  // namespace
void* operator new(std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

using namespace memplan;

namespace {

template <class F>
uint64_t allocations_of(F&& f) {
  g_allocations = 0;
  g_counting = true;
  f();
  g_counting = false;
  return g_allocations.load();
}

EstimateRequest llama(uint64_t seq) {
  EstimateRequest r;
  r.model = find_model(builtin_presets(), "--model", "llama-2-7b").model;
  r.recipe = parse_recipe("--precision", "amp-bf16");
  r.optimizer = parse_optimizer("--optimizer", "adamw");
  r.seq = seq;
  r.batch = 4;
  return r;
}

}  // namespace

TEST_CASE("terms are found by kind, with count x bytes x copies", "[estimate][values]") {
  EstimateRequest r = llama(0);
  r.recipe = parse_recipe("--precision", "mixed-bf16");
  const Estimate e = estimate(r);
  const uint64_t p = 6738415616ull;
  const Term& o = e.term(TermKind::optimizer_state);
  // fp32 master (4 B) + Adam's 2 fp32 copies (8 B) + 291 step counters (4 B each).
  CHECK(o.bytes == 12 * p + 4 * 291);
  REQUIRE(o.line_count == 3);
  CHECK(o.lines[0].what == Counted::master_weights);
  CHECK(o.lines[0].n[0] == p);
  CHECK(o.lines[0].bytes == 4 * p);
  CHECK(o.lines[1].what == Counted::optimizer_state);
  CHECK(o.lines[1].n[1] == 2);  // copies
  CHECK(o.lines[1].format == FormatId::optimizer_state);
  CHECK(o.lines[1].bytes == 8 * p);
  CHECK(o.lines[2].code == LineCode::step_counters);
  CHECK(o.lines[2].n[0] == 291);
  CHECK(e.bytes(TermKind::kv_cache) == 0);
  CHECK_FALSE(e.has(TermKind::buffers));
  // No sequence: the activations are not counted, and a note with the context says why.
  CHECK(e.term(TermKind::activations).basis == Basis::not_counted);
  bool need_seq = false;
  for (uint8_t i = 0; i < e.note_count; ++i)
    if (e.notes[i].code == NoteCode::activations_need_seq) need_seq = e.notes[i].n[0] == 4096;
  CHECK(need_seq);
}

TEST_CASE("estimate() allocates nothing without a layout or LoRA", "[estimate][values]") {
  EstimateRequest params;
  params.model.parameters = 7'000'000'000;
  params.recipe = parse_recipe("--precision", "amp-bf16");
  params.optimizer = parse_optimizer("--optimizer", "adamw");
  uint64_t required = 0;
  CHECK(allocations_of([&] { required = estimate(params).required_bytes(); }) == 0);
  // 4 + 4 + 8 B per parameter + the default overhead: the CUDA context measured on an H200
  // (753,729,536 B in use - 35,651,584 B reserved by torch, tests/data/gpu_h200_measured.json).
  CHECK(required == 16 * 7'000'000'000ull + 718'077'952ull);
  // On cuda estimate() also replays the step through the caching allocator (step_events.cpp), which
  // allocates: the ledger alone is checked on cpu, where there is no caching allocator to replay.
  EstimateRequest ledger = llama(2048);
  ledger.device = Device::cpu;
  uint64_t act = 0;
  CHECK(allocations_of([&] { act = estimate(ledger).bytes(TermKind::activations); }) == 0);
  CHECK(act > 0);
}
