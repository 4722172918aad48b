#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include <memplan/error.hpp>
#include <memplan/presets.hpp>
#include "core/planning/advise.hpp"
#include "core/planning/advise_knobs.hpp"
#include "core/planning/planning.hpp"

#include "cli/render_advice.hpp"

using namespace memplan;

namespace {

EstimateRequest llama_7b(const std::string& precision, uint64_t batch, uint64_t seq) {
  EstimateRequest r;
  r.model = find_model(builtin_presets(), "--model", "llama-2-7b").model;
  r.recipe = parse_recipe("--precision", precision);
  r.optimizer = parse_optimizer("--optimizer", "adamw");
  r.batch = batch;
  r.seq = seq;
  return r;
}

const GpuSpec& gpu(const char* id) { return find_gpu(builtin_presets(), "--gpu", id); }

// A GPU of exactly `bytes` usable memory.
GpuSpec custom_gpu(uint64_t bytes, bool bf16 = true) {
  GpuSpec g;
  g.id = "test-gpu";
  g.vendor = "nvidia";
  g.memory_total_bytes = bytes;
  g.compute_capability = bf16 ? "8.0" : "7.5";
  g.bf16 = bf16;
  return g;
}

const Suggestion* single(const Advice& a, const std::string& knob) {
  for (const Suggestion& s : a.singles)
    if (s.changes.size() == 1 && advice_knob_name(s.changes[0].knob) == knob) return &s;
  return nullptr;
}

// The example, advised once for every test that reads it.
const Advice& example_advice() {
  static const Advice a = advise(llama_7b("fp32", 16, 2048), gpu("rtx-4090"), builtin_presets().gpus);
  return a;
}

std::set<std::string> knobs_of(const Suggestion& s) {
  std::set<std::string> k;
  for (const AdviceChange& c : s.changes) k.insert(advice_knob_name(c.knob));
  return k;
}

}  // namespace

TEST_CASE("LoRA r=16 on q,v of Llama-2-7B is 8,388,608 trainable parameters", "[advise]") {
  // 32 layers x 2 matrices (q_proj, v_proj) x 16 x (4096 in + 4096 out) = 8,388,608 (0.12%).
  const LoraAdapters a = lora_adapters(find_model(builtin_presets(), "--model", "llama-2-7b").model, 16);
  CHECK(a.parameters == 8388608);
  CHECK(a.matrices == 64);
  CHECK(lora_target_names(a) == "q_proj,v_proj");
  // GPT-2's fused c_attn (768 -> 2304): 12 x 8 x (768 + 2304) = 294,912 at r=8, peft's well-known count.
  const LoraAdapters g = lora_adapters(find_model(builtin_presets(), "--model", "gpt2").model, 8);
  CHECK(g.parameters == 294912);
  // Grouped-query attention: Llama-3-8B v_proj is 4096 -> 1024; 32 x 16 x ((4096+4096) + (4096+1024)) =
  // 6,815,744.
  CHECK(lora_adapters(find_model(builtin_presets(), "--model", "llama-3-8b").model, 16).parameters ==
        6815744);
  ModelSpec bare;
  bare.parameters = 7000000000;
  CHECK_THROWS_AS(lora_adapters(bare, 16), Error);
}

TEST_CASE("autocast on an fp32 run shrinks activations, not the 16 B/param states", "[advise]") {
  // Llama-2-7B fp32 AdamW: 6,738,415,616 x (4 weights + 4 gradients + 8 Adam) + 291 step counters x 4 B.
  const uint64_t states = 6738415616ull * 16 + 291 * 4;
  const Advice& a = example_advice();
  const Suggestion* s = single(a, "autocast");
  REQUIRE(s);
  CHECK(s->request.recipe.name == "amp-bf16");  // the 4090 does bf16
  const Estimate before = estimate(a.request), after = estimate(s->request);
  CHECK(before.bytes(TermKind::parameters) + before.bytes(TermKind::gradients) +
            before.bytes(TermKind::optimizer_state) ==
        states);
  CHECK(after.bytes(TermKind::parameters) + after.bytes(TermKind::gradients) +
            after.bytes(TermKind::optimizer_state) ==
        states);
  CHECK(after.bytes(TermKind::activations) < before.bytes(TermKind::activations));
  CHECK(s->required_bytes == after.required_bytes());

  // An MLP 1024-4096-4096-10 at batch 8192, hand counted. fp32 keeps the two ReLU outputs:
  // 2 x 4096 x 4 B = 32,768 B/row. amp-bf16 keeps the input's bf16 cast and the two ReLU outputs
  // in bf16: (1024 + 2 x 4096) x 2 B = 18,432 B/row, plus bf16 copies of the weight matrices
  // after the first (4096 x 4096 + 4096 x 10) x 2 B = 33,636,352 B for backward. (At batch 64 the
  // copies outweigh the saving, and advise leaves autocast out.)
  EstimateRequest mlp;
  mlp.model.parameters = 1024 * 4096 + 4096 + 4096 * 4096 + 4096 + 4096 * 10 + 10;  // 21,020,682
  mlp.model.mlp_widths = {1024, 4096, 4096, 10};
  mlp.recipe = parse_recipe("--precision", "fp32");
  mlp.optimizer = parse_optimizer("--optimizer", "adamw");
  mlp.batch = 8192;
  mlp.overhead_bytes = 0;
  mlp.overhead_given = true;  // none, on any GPU
  const Advice m = advise(mlp, custom_gpu(1 << 20), builtin_presets().gpus);
  const Suggestion* ms = single(m, "autocast");
  REQUIRE(ms);
  CHECK(estimate(mlp).bytes(TermKind::activations) == 8192ull * 32768);
  // The step's peak is the start of backward: weights and Adam state (12 B/param), the activations,
  // and cross-entropy's two gradients of the 8192 x 10 fp32 logits; the optimizer step (16 B/param
  // + a 4 B foreach copy) is lower. Every phase holds torch's two 32 MiB cuBLAS workspaces. What the
  // suggestion requires is what the caching allocator reserves for that step (no overhead here).
  const Estimate changed = estimate(ms->request);
  CHECK(changed.peak_bytes() ==
        21020682ull * 12 + 8192ull * 18432 + 33636352 + 2 * 8192 * 10 * 4 + 2 * (32ull << 20));
  CHECK(ms->required_bytes == changed.required_bytes());
  CHECK(ms->required_bytes >= changed.peak_bytes());
  mlp.batch = 64;
  CHECK(single(advise(mlp, custom_gpu(1 << 20), builtin_presets().gpus), "autocast") == nullptr);
}

TEST_CASE("a card without bf16 gets amp-fp16 with a GradScaler", "[advise]") {
  // Batch 16 x 2048: the activations set the peak (at batch 4 x 1024 the optimizer step does, and
  // autocast would not lower it).
  const Advice a = advise(llama_7b("fp32", 16, 2048), gpu("t4"), builtin_presets().gpus);
  const Suggestion* s = single(a, "autocast");
  REQUIRE(s);
  CHECK(s->request.recipe.name == "amp-fp16");
  CHECK_FALSE(s->changes[0].bf16);
  CHECK(cli::suggestion_change(*s) == "autocast amp-fp16 with a GradScaler");
  CHECK(s->cost_rank == 22);
  REQUIRE(s->changes[0].notes.size() == 2);
  CHECK(s->changes[0].notes[1].code == AdviceNoteCode::no_bf16_hardware);
  CHECK(cli::note_text(s->changes[0].notes[1], {}) ==
        "t4 has no bf16 hardware: amp-fp16 with torch.amp.GradScaler");
  const Suggestion* q = single(a, "qlora");
  REQUIRE(q);
  CHECK(q->request.recipe.name == "fp16");
  CHECK(q->request.quantize == StorageFormatId::nf4);
}

TEST_CASE("checkpointing and micro-batches lower activations, accumulation keeps the effective batch",
          "[advise]") {
  const Advice& a = example_advice();
  const Estimate base = estimate(a.request);
  const Suggestion* ck = single(a, "checkpointing");
  REQUIRE(ck);
  CHECK(ck->request.checkpointing ==
        Checkpointing::full);  // selective does not fit either: the strongest is shown
  const uint64_t ck_act = estimate(ck->request).bytes(TermKind::activations);
  CHECK(ck_act < base.bytes(TermKind::activations));
  // Full checkpointing still keeps each layer's input: 16 x 32 layers x 2048 x 4096 x 4 B.
  CHECK(ck_act >= 16ull * 32 * 2048 * 4096 * 4);
  const Suggestion* mb = single(a, "micro-batch");
  REQUIRE(mb);
  CHECK(mb->request.batch == 1);  // 7B fp32 AdamW states alone (100 GiB) exceed 24 GiB
  CHECK(mb->changes[0].batch == 1);
  CHECK(mb->changes[0].steps == 16);
  CHECK(cli::suggestion_change(*mb) == "micro-batch 1 x 16 accumulation steps (effective batch 16)");
  CHECK(cli::suggestion_cost(*mb) == "x16 accumulation steps: same effective batch, more steps");
  CHECK(cli::suggestion_notes(*mb, {}) ==
        std::vector<std::string>{
            "gradient accumulation: divide the loss by the 16 steps (or the gradients come "
            "out 16x too large)"});
  CHECK(mb->verdict == Verdict::no);
}

TEST_CASE("suggestions are cheapest first, combinations only without a fitting subset", "[advise]") {
  const Advice& a = example_advice();
  REQUIRE_FALSE(a.fits());
  for (size_t i = 1; i < a.singles.size(); ++i) {
    CHECK(a.singles[i - 1].tier <= a.singles[i].tier);
    if (a.singles[i - 1].tier == a.singles[i].tier)
      CHECK(a.singles[i - 1].cost_rank <= a.singles[i].cost_rank);
  }
  CHECK(a.singles.front().changes[0].knob == AdviceKnob::micro_batch);
  CHECK(a.singles.back().tier == 3);
  // No single change fits this run on a 24 GB card.
  for (const Suggestion& s : a.singles) CHECK_FALSE((s.fits() && s.tier < 3));
  REQUIRE_FALSE(a.combinations.empty());
  CHECK_FALSE(a.search_capped);
  for (size_t i = 0; i < a.combinations.size(); ++i) {
    const Suggestion& c = a.combinations[i];
    CHECK(c.fits());
    CHECK(c.changes.size() >= 2);
    CHECK(c.changes.size() <= 3);
    if (i) CHECK(a.combinations[i - 1].cost_rank <= c.cost_rank);
    for (size_t j = 0; j < a.combinations.size(); ++j) {
      if (i == j) continue;
      const std::set<std::string> small = knobs_of(a.combinations[j]), big = knobs_of(c);
      CHECK_FALSE(
          (small.size() < big.size() && std::includes(big.begin(), big.end(), small.begin(), small.end())));
    }
  }
  // QLoRA's 4-bit weights with micro-batch 1 x 16 is the cheapest that fits.
  CHECK(knobs_of(a.combinations.front()) == std::set<std::string>{"qlora", "micro-batch"});
  // The brief's example: LoRA + checkpointing at micro-batch 4 (x 4 steps) or more is found by the
  // search (with the step's peak, gradients and activations are not alive together: 6 x 3 fits).
  bool lora_ck = false;
  for (const Suggestion& c : a.combinations)
    lora_ck = lora_ck || (knobs_of(c) == std::set<std::string>{"lora", "checkpointing", "micro-batch"} &&
                          c.request.batch >= 4);
  CHECK(lora_ck);
}

TEST_CASE("a fitting single knob suppresses every combination containing it", "[advise]") {
  // 7B fp32 AdamW, no activations: 112,000,000,000 B + the A100's CUDA context (1 KiB x 2,048 threads x
  // 108 SMs + 441,253,888 B = 667,746,304 B) = 112,667,746,304 B > 84,928,364,544 B on an A100 80GB.
  EstimateRequest r;
  r.model.parameters = 7000000000;
  r.recipe = parse_recipe("--precision", "fp32");
  r.optimizer = parse_optimizer("--optimizer", "adamw");
  const Advice a = advise(r, gpu("a100-80gb"), builtin_presets().gpus);
  CHECK(a.required_bytes == 112667746304ull);
  const Suggestion* o8 = single(a, "optimizer-8bit");
  REQUIRE(o8);
  CHECK(o8->fits());
  // Sharding: 2 GPUs with ZeRO-1: 4 + 4 + 8/2 = 12 B x 7e9 = 84e9 B + 667,746,304 B, under 84,928,364,544 B.
  const Suggestion* sh = single(a, "sharding");
  REQUIRE(sh);
  CHECK(sh->gpus == 2);
  CHECK(sh->required_bytes == 84000000000ull + 667746304ull);
  CHECK(sh->verdict == Verdict::tight);
  for (const Suggestion& c : a.combinations)
    for (const Suggestion& s : a.singles)
      if (s.fits() && s.tier < 3) CHECK(knobs_of(c).count(advice_knob_name(s.changes[0].knob)) == 0);
  // Autocast saves nothing without activations: not listed.
  CHECK(single(a, "autocast") == nullptr);
}

TEST_CASE("tier 3 is the smallest preset GPU that fits as is, Apple only as a last resort", "[advise]") {
  // 112e9 B + a context needed (on an M3 Max, whose SMs are unknown: the H200's 718,077,952 B). By usable
  // memory: apple-m3-max (115,427,246,080 B budget) would be smallest but is unified memory; then mi250x
  // (137,405,399,040 B); h200 (150,754,820,096 B) is larger.
  EstimateRequest r;
  r.model.parameters = 7000000000;
  r.recipe = parse_recipe("--precision", "fp32");
  r.optimizer = parse_optimizer("--optimizer", "adamw");
  const Advice a = advise(r, gpu("t4"), builtin_presets().gpus);
  const Suggestion& t3 = a.singles.back();
  CHECK(t3.tier == 3);
  CHECK(t3.gpu == "mi250x");
  CHECK(t3.fits());
  // Only Apple fits: a list holding the T4 and the M3 Max.
  const std::vector<GpuSpec> few = {gpu("t4"), gpu("apple-m3-max-128gb")};
  CHECK(advise(r, gpu("t4"), few).singles.back().gpu == "apple-m3-max-128gb");
  // A bf16 recipe is not run "as is" on a card without bf16: 1e9 bf16 Adam = 8e9 B fits a V100 16GB
  // in bytes, but the V100 lacks bf16; the smallest bf16 card that fits is the RTX 3060 12GB.
  r.model.parameters = 1000000000;
  r.recipe = parse_recipe("--precision", "bf16");
  const std::vector<GpuSpec> cards = {gpu("t4"), gpu("v100-16gb"), gpu("rtx-3060"), gpu("a100-40gb")};
  const Advice b = advise(r, custom_gpu(4ull << 30), cards);
  CHECK(b.singles.back().gpu == "rtx-3060");
}

TEST_CASE("a run that fits gets its headroom and no combinations", "[advise]") {
  EstimateRequest r = llama_7b("bf16", 1, 512);
  r.model = find_model(builtin_presets(), "--model", "gpt2").model;
  const Advice a = advise(r, gpu("a100-80gb"), builtin_presets().gpus);
  CHECK(a.fits());
  CHECK(a.spare_bytes > 0);
  CHECK(a.combinations.empty());
  CHECK(a.candidates_tried == 0);
}

TEST_CASE("the combination search is capped", "[advise]") {
  AdviceOptions o;
  o.max_candidates = 5;
  const Advice a = advise(llama_7b("fp32", 16, 2048), gpu("rtx-4090"), builtin_presets().gpus, o);
  CHECK(a.search_capped);
  CHECK(a.candidates_tried == 5);
  o.max_knobs = 4;
  CHECK_THROWS_AS(advise(llama_7b("fp32", 16, 2048), gpu("rtx-4090"), builtin_presets().gpus, o), Error);
}

TEST_CASE("tier 0 is a checklist", "[advise]") {
  const auto& c = cli::tier0_checklist();
  REQUIRE(c.size() == 4);
  CHECK(c[1].find("loss.item()") != std::string::npos);
  CHECK(c[2].find("torch.no_grad()") != std::string::npos);
}

TEST_CASE("advice is codes and numbers, worded by the CLI", "[advise]") {
  const Advice& a = example_advice();
  const Suggestion* l = single(a, "lora");
  REQUIRE(l);
  const AdviceChange& c = l->changes[0];
  CHECK(c.lora_rank == 16);
  CHECK(c.lora_parameters == 8388608);  // 32 layers x 2 x 16 x (4096 + 4096)
  CHECK(c.lora_targets == "q_proj,v_proj");
  CHECK(c.frozen_half);  // fp32 weights are loaded in bf16 on an RTX 4090
  // 8,388,608 / (6,738,415,616 + 8,388,608) = 0.124%
  CHECK(cli::change_text(c) ==
        "LoRA r=16 on q_proj,v_proj (8,388,608 trainable, 0.12%), frozen weights bf16");
  REQUIRE(c.notes.size() == 1);
  CHECK(c.notes[0].code == AdviceNoteCode::lora_peft);
  CHECK(cli::note_text(c.notes[0], {}) ==
        "LoRA: peft LoraConfig(r=16, target_modules=[q_proj,v_proj]); activations counted with frozen base "
        "weights");
  const Suggestion& big = a.singles.back();
  REQUIRE(big.changes.size() == 1);
  CHECK(big.changes[0].knob == AdviceKnob::gpu);
  CHECK(cli::cost_text(big.changes[0]) == "new hardware: costs money (or a cloud instance)");
}

// cheapest_fit's combination path (advise_search.cpp's cheapest_combination) against advise()'s full
// search, and the bound on knob settings that path relies on.
namespace {

EstimateRequest cheapest_fit_plan(const char* model, const char* precision, uint64_t batch, uint64_t seq) {
  EstimateRequest r;
  r.model = find_model(builtin_presets(), "--model", model).model;
  r.recipe = parse_recipe("--precision", precision);
  r.optimizer = parse_optimizer("--optimizer", "adamw");
  r.batch = batch;
  r.seq = seq;
  return r;
}

std::string fix_described(const Suggestion& s) {
  return cli::suggestion_change(s) + " | " + std::to_string(s.required_bytes) + " | " +
         std::to_string(s.cost_rank) + " | " + s.gpu + " | " + verdict_name(s.verdict);
}

}  // namespace

TEST_CASE("cheapest_fit without a fitting single change is advise()'s first combination", "[advise]") {
  struct Case {
    const char* model;
    const char* precision;
    uint64_t batch;
    uint64_t seq;
    const char* gpu;
  };
  const Case cases[] = {
      {"llama-2-7b", "fp16", 4, 2048, "t4"},        {"llama-2-7b", "fp16", 4, 2048, "rtx-4090"},
      {"llama-2-7b", "fp32", 16, 2048, "rtx-4090"}, {"llama-2-13b", "fp16", 8, 4096, "a100-40gb"},
      {"llama-2-7b", "amp-bf16", 8, 4096, "t4"},
  };
  int combination_path = 0;
  for (const Case& c : cases) {
    const EstimateRequest r = cheapest_fit_plan(c.model, c.precision, c.batch, c.seq);
    const GpuSpec& g = find_gpu(builtin_presets(), "--gpu", c.gpu);
    const Advice a = advise(r, g, builtin_presets().gpus);
    bool single_fits = false;
    for (const Suggestion& s : a.singles) single_fits = single_fits || (s.fits() && s.tier < 3);
    if (single_fits || a.fits()) continue;
    ++combination_path;
    const std::optional<Suggestion> got = cheapest_fit(r, g, builtin_presets().gpus);
    std::optional<Suggestion> want;
    if (!a.combinations.empty()) {
      want = a.combinations.front();
    } else {
      for (const Suggestion& s : a.singles)
        if (!want && s.fits()) want = s;
    }
    INFO(c.model << " " << c.precision << " on " << c.gpu);
    REQUIRE(got.has_value() == want.has_value());
    if (got) CHECK(fix_described(*got) == fix_described(*want));
  }
  CHECK(combination_path >= 3);
}

TEST_CASE("no knob returns more settings than knob_max_settings allows", "[advise]") {
  const std::vector<advice::Knob>& table = advice::knob_table();
  AdviceOptions options;
  const GpuSpec& g = find_gpu(builtin_presets(), "--gpu", "rtx-4090");
  const advice::KnobContext ctx{g, g.usable_bytes(), options};
  std::vector<EstimateRequest> plans = {cheapest_fit_plan("llama-2-7b", "fp32", 16, 2048),
                                        cheapest_fit_plan("gpt2", "fp32", 64, 1024)};
  EstimateRequest infer = cheapest_fit_plan("llama-2-7b", "fp16", 32, 4096);
  infer.mode = Mode::infer;
  plans.push_back(infer);
  for (const EstimateRequest& r : plans) {
    const advice::Candidate base{r, {}};
    for (const advice::Knob& k : table) {
      const std::vector<advice::Candidate> first = advice::apply_knob(k, base, ctx);
      CHECK(first.size() <= advice::knob_max_settings(k.knob));
      for (const advice::Candidate& c : first)  // and one knob further along a chain
        for (const advice::Knob& k2 : table)
          if (k2.group != k.group && k2.stage != advice::Stage::solve)
            CHECK(advice::apply_knob(k2, c, ctx).size() <= advice::knob_max_settings(k2.knob));
    }
  }
}

TEST_CASE("max_seq and max_batch asked for a range give the exact length inside it, the side outside",
          "[advise]") {
  const EstimateRequest r = cheapest_fit_plan("gpt2", "fp32", 2, 1024);
  int searched = 0;
  for (uint64_t memory = 10ull << 28; memory <= 20ull << 28; memory += 1ull << 28) {  // 2.5 .. 5 GiB
    bool capped = false;
    const uint64_t full = max_seq(r, memory, capped);
    if (full <= 4 || full >= 1024) continue;  // GPT-2's 1,024 positions
    ++searched;
    const uint64_t range[][2] = {{0, UINT64_MAX},      {full / 2, full}, {full + 1, 4 * full},
                                 {full / 2, full + 1}, {full, full + 1}, {full / 4, full / 2}};
    for (const auto& fc : range) {
      const uint64_t got = max_seq(r, memory, capped, fc[0], fc[1]);
      INFO("memory " << memory << " full " << full << " range [" << fc[0] << ", " << fc[1] << ") got "
                     << got);
      if (full < fc[0])
        CHECK(got < fc[0]);
      else if (full >= fc[1])
        CHECK(got >= fc[1]);
      else
        CHECK(got == full);
    }
    EstimateRequest b = r;
    b.seq = std::max<uint64_t>(1, full / 8);
    const BatchPlan plan = max_batch(b, memory, 0);
    REQUIRE(plan.max_micro_batch >= 2);
    CHECK(max_batch(b, memory, 0, plan.max_micro_batch).max_micro_batch >= plan.max_micro_batch);
    const BatchPlan below = max_batch(b, memory, 0, plan.max_micro_batch + 1);
    CHECK(below.max_micro_batch == plan.max_micro_batch);
    CHECK(below.required_bytes == plan.required_bytes);
  }
  CHECK(searched >= 2);
}
