#include "cli/emit_choice.hpp"

#include <algorithm>

#include <memplan/error.hpp>
#include <memplan/fit.hpp>
#include <memplan/quantity.hpp>

#include "cli/options.hpp"
#include "cli/render_advice.hpp"

namespace memplan::cli {

namespace {

std::string emit_verdict_text(uint64_t required, uint64_t memory, const std::string& gpu, Units units) {
  return "required " + format_bytes(required, units) + " of " + format_bytes(memory, units) + " on " + gpu +
         ": " + verdict_name(verdict_for(required, memory));
}

// The accumulation a micro-batch change adds: the steps multiply those already given.
EstimateRequest written_plan(const Suggestion& s, const EstimateRequest& given) {
  EstimateRequest r = s.request;
  for (const AdviceChange& c : s.changes)
    if (c.knob == AdviceKnob::micro_batch && c.mode == Mode::train && c.steps > 1)
      r.grad_accum = std::max<uint64_t>(given.grad_accum, 1) * c.steps;
  return r;
}

// A knob no config writes (memplan's flags and the frameworks alike): said with the suggestion.
void unwritten_knobs(const Suggestion& s, std::vector<std::string>& notes) {
  for (const AdviceChange& c : s.changes)
    if (c.knob == AdviceKnob::layer_offload)
      notes.push_back("not expressible as a config: the layers kept in host memory of " +
                      suggestion_change(s) + " (llama.cpp's -ngl)");
}

}  // namespace

uint64_t parse_emit_rank(const std::string& text) {
  if (text.empty()) return 0;
  const uint64_t n = parse_count("--emit-rank", text, 1u << 20);
  if (n == 0)
    throw Error("--emit-rank", "\"" + text + "\" must be at least 1 (1: the cheapest fitting suggestion)");
  return n;
}

std::optional<EmitRequest> advice_emit_request(const Advice& a, const EstimateRequest& given, uint64_t rank,
                                               Units units, std::string& why) {
  EmitRequest e;
  e.command = "advise";
  e.given = given;
  if (a.fits()) {
    e.chosen = given;
    e.required_bytes = a.required_bytes;
    e.memory_bytes = a.memory_bytes;
    e.summary = "the run already fits, as given (" +
                emit_verdict_text(a.required_bytes, a.memory_bytes, a.gpu.id, units) + ")";
    return e;
  }
  // Fitting suggestions a config can hold (a bigger GPU is hardware), cheapest first.
  std::vector<const Suggestion*> list;
  for (const auto* from : {&a.singles, &a.combinations})
    for (const Suggestion& s : *from)
      if (s.fits() && std::none_of(s.changes.begin(), s.changes.end(),
                                   [](const AdviceChange& c) { return c.knob == AdviceKnob::gpu; }))
        list.push_back(&s);
  std::stable_sort(list.begin(), list.end(), [](const Suggestion* x, const Suggestion* y) {
    return x->tier != y->tier ? x->tier < y->tier : x->cost_rank < y->cost_rank;
  });
  if (list.empty()) {
    why = "no change a config can hold makes the run fit " + a.gpu.id + " (see advise without --emit)";
    return std::nullopt;
  }
  if (rank > list.size())
    throw Error("--emit-rank", std::to_string(rank) + " is past the last fitting suggestion (" +
                                   std::to_string(list.size()) + " fit)");
  for (size_t i = rank ? rank - 1 : 0; i < list.size(); ++i) {
    const Suggestion& s = *list[i];
    const EstimateRequest written = written_plan(s, given);
    const uint64_t required =
        written.grad_accum == s.request.grad_accum ? s.required_bytes : estimate(written).required_bytes();
    const std::string label = "suggestion " + std::to_string(i + 1) + ": " + suggestion_change(s);
    if (required != s.required_bytes) {
      const std::string note = label + ": with " + std::to_string(written.grad_accum) +
                               " accumulation steps the gradients of earlier micro-batches stay allocated: " +
                               emit_verdict_text(required, s.memory_bytes, s.gpu, units) +
                               " (advise counted " + format_bytes(s.required_bytes, units) + ")";
      if (!rank && verdict_for(required, s.memory_bytes) == Verdict::no) {
        e.notes.push_back("skipped " + note);
        continue;
      }
      e.notes.push_back(note);
    }
    e.chosen = written;
    e.rank = i + 1;
    e.required_bytes = required;
    e.memory_bytes = s.memory_bytes;
    e.summary = label + " (" + emit_verdict_text(required, s.memory_bytes, s.gpu, units) + ")";
    unwritten_knobs(s, e.notes);
    return e;
  }
  why = "no fitting suggestion still fits once its accumulation steps are counted (see the notes)";
  return std::nullopt;
}

EmitRequest batch_emit_request(const EstimateRequest& given, const GpuSpec& gpu, uint64_t micro,
                               uint64_t steps, uint64_t seq, uint64_t required, Units units) {
  EmitRequest e;
  e.command = "max-batch";
  e.given = given;
  EstimateRequest r = request_on(given, gpu);
  if (seq)
    r.seq = seq;
  else
    r.batch = micro;
  if (steps) r.grad_accum = steps;
  const uint64_t written = r.grad_accum == given.grad_accum ? required : estimate(r).required_bytes();
  const uint64_t memory = gpu.usable_bytes();
  e.summary = (seq ? "sequence " + std::to_string(seq) + " at batch " + std::to_string(r.batch)
                   : "micro-batch " + std::to_string(micro) +
                         (steps ? " x " + std::to_string(steps) + " accumulation steps" : "")) +
              " (" + emit_verdict_text(written, memory, gpu.id, units) + ")";
  if (written != required)
    e.notes.push_back(
        "with " + std::to_string(r.grad_accum) +
        " accumulation steps the gradients of earlier micro-batches stay allocated: max-batch counted " +
        format_bytes(required, units) + ", the written plan needs " + format_bytes(written, units));
  e.chosen = r;
  e.required_bytes = written;
  e.memory_bytes = memory;
  return e;
}

}  // namespace memplan::cli
