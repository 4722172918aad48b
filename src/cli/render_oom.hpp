#pragma once
// The words of `memplan why-oom`: what each number of an out-of-memory message is, what the numbers
// mean together, and the fixes the message itself points to.

#include <string>
#include <utility>
#include <vector>

#include <memplan/quantity.hpp>
#include "core/diagnose/oom_message.hpp"

namespace memplan::cli {

// "PyTorch CUDA out of memory on GPU 0", "vLLM: KV cache too small for the max sequence length", ...
std::string oom_title(const OomMessage& m);

// The numbers the message printed, each with what it is: {label, value, meaning}.
struct OomFact {
  std::string label;
  std::string value;
  std::string meaning;
};
std::vector<OomFact> oom_facts(const OomMessage& m, Units units);

// What the numbers mean together and what to do, one sentence each, most important first.
// `plan_given`: the run's flags were given (no hint to give them).
std::vector<std::string> oom_findings(const OomMessage& m, Units units, bool plan_given = false);

// Short codes of the findings, for JSON: "short_of_memory", "fragmentation", ...
std::vector<std::string> oom_finding_codes(const OomMessage& m);

const char* oom_kind_name(OomKind k);  // "pytorch", "vllm_max_seq_len", ...

}  // namespace memplan::cli
