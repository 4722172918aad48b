#pragma once
// Declarations of every command's `add` function (one cmd_<name>.cpp each).

#include "cli/command.hpp"

namespace memplan::cli {

void add_estimate(CLI::App& sub, Runner& run);
void add_fit(CLI::App& sub, Runner& run);
void add_max_batch(CLI::App& sub, Runner& run);
void add_gpus(CLI::App& sub, Runner& run);
void add_models(CLI::App& sub, Runner& run);
void add_cast(CLI::App& sub, Runner& run);   // memplan cast: exact rounding into each format
void add_dtype(CLI::App& sub, Runner& run);  // memplan dtype: number-format facts
void add_scale(CLI::App& sub, Runner& run);  // memplan scale: loss scale for a gradient range
void add_probe(CLI::App& sub, Runner& run);  // cmd_probe.cpp
void add_ladder(CLI::App& sub, Runner& run);
void add_sweep(CLI::App& sub, Runner& run);
void add_inspect(CLI::App& sub, Runner& run);
void add_advise(CLI::App& sub, Runner& run);    // cmd_advise.cpp: what to change when it does not fit
void add_gguf_fit(CLI::App& sub, Runner& run);  // cmd_gguf_fit.cpp: llama.cpp / Ollama layer offload
void add_serve(CLI::App& sub, Runner& run);     // cmd_serve.cpp: vLLM's start-up memory budget
// cmd_diff.cpp: two runs compared for a review
void add_diff(CLI::App& sub, Runner& run);
// cmd_why_oom.cpp: an out-of-memory message explained
void add_why_oom(CLI::App& sub, Runner& run);
void add_plot(CLI::App& sub, Runner& run);  // cmd_plot.cpp: the estimate as an SVG chart

}  // namespace memplan::cli
