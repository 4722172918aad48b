// The table of subcommands: one row per command, each implemented in its own cmd_<name>.cpp.
#include "cli/command.hpp"
#include "cli/commands_list.hpp"

namespace memplan::cli {

const std::vector<CommandSpec>& commands() {
  static const std::vector<CommandSpec> table = {
      {"estimate", "Memory breakdown and fit table for a training or inference run", add_estimate},
      {"fit", "Does it fit on these GPUs? One line per GPU; exit 0 fits, 1 not", add_fit},
      {"max-batch", "Largest micro-batch that fits, and gradient-accumulation steps", add_max_batch},
      {"advise", "When it does not fit: changes ranked cheapest first, each with its new total and verdict",
       add_advise},
      {"gpus", "GPU presets", add_gpus},
      {"models", "Model presets", add_models},
      {"dtype", "Number formats: bits, range, precision (as torch.finfo reports them)", add_dtype},
      {"cast", "What each format stores for a value: exact rounding, bits, error", add_cast},
      {"scale", "The loss scale that keeps gradients in range of fp16 (bf16 needs none)", add_scale},
      {"probe", "Read the real GPUs of this machine through NVML (name, memory, compute capability, MIG)",
       add_probe},
      {"ladder", "Run your training command, halving the batch on out-of-memory until one runs", add_ladder},
      {"sweep", "Measure throughput at several batch sizes and mark the bend", add_sweep},
      {"inspect", "What memplan reads from model files: tensors by dtype, parameters, architecture",
       add_inspect},
      {"gguf-fit", "llama.cpp / Ollama: the largest -ngl that fits, KV cache, compute buffers, the flags",
       add_gguf_fit},
      {"serve", "A serving engine's memory budget (vLLM): KV-cache blocks, tokens, concurrency, flags",
       add_serve},
      {"diff",
       "Two runs compared (JSON outputs or plan files): terms and verdicts that changed; exit 1 when a fit "
       "became a no-fit",
       add_diff},
      {"why-oom",
       "Explain an out-of-memory message (PyTorch, vLLM, llama.cpp) and, with the run's flags, the fix",
       add_why_oom},
      {"plot", "The estimate as an SVG chart: memory vs micro-batch or sequence, or by precision recipe",
       add_plot},
  };
  return table;
}

bool runs_user_command(std::string_view name) { return name == "ladder" || name == "sweep"; }

}  // namespace memplan::cli
