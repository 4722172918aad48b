#pragma once
// memplan serve --from FILE / --from-command "...": a pasted serving command line read into
// memplan's own flags. `vllm serve MODEL ...` and `python -m vllm.entrypoints.openai.api_server`
// run as `memplan serve`, `python -m sglang.launch_server` as `memplan serve --engine sglang`,
// `llama-server -m model.gguf ...` as `memplan gguf-fit` (memplan's llama.cpp path). Every engine
// flag is reported with the option it set, flags that change memory but are not modelled are
// listed, unknown ones listed as not read.

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "cli/from_config.hpp"
#include "cli/serve_from_words.hpp"

namespace memplan::cli {

struct ServeArgs;

enum class ServeEngine { vllm, sglang, llama_server };

// What an engine flag does in memplan (serve_from_flags.cpp).
enum class FlagAct {
  to,            // the memplan flag `option`, value as written
  known,         // changes no GPU memory (ports, logging, templates)
  not_modelled,  // changes memory; memplan does not model it (`why`)
  model,         // a Hub id (a preset when one has it) or a local directory
  gguf,          // llama.cpp -m: a .gguf file
  dtype,         // --dtype auto|bfloat16|float16|float32
  quantization,  // --quantization awq|gptq|fp8|bitsandbytes|...
  vllm_kv,       // vLLM --kv-cache-dtype auto|fp8*
  chunked_on,
  chunked_off,
  flash_attn,    // llama.cpp -fa [on|off|auto]
  gpu_layers,    // llama.cpp -ngl N|auto|all
  tensor_split,  // llama.cpp -ts 3,1: also the GPU count
  cpu_moe,       // llama.cpp -cmoe: every layer's experts on the CPU
  ctx_size,      // llama.cpp -c N (0: the model's)
  split_mode,    // llama.cpp -sm layer|row|none
};

enum class FlagTakes { value, none, maybe };  // maybe: an optional on|off|auto|true|false

struct EngineFlag {
  const char* names;  // spellings, space-separated: "-tp --tensor-parallel-size"
  FlagTakes takes;
  FlagAct act;
  const char* option;  // FlagAct::to: the memplan flag
  const char* why;     // FlagAct::not_modelled
};

// The flags of one engine, and the one that `name` spells (nullptr when unknown).
const std::vector<EngineFlag>& engine_flags(ServeEngine e);
const EngineFlag* find_engine_flag(ServeEngine e, const std::string& name);

struct MemplanFlag {
  std::string flag, value;  // value "" for a switch
};

struct ServeFrom {
  FromReport report;  // framework: "vllm", "sglang" or "llama-server"
  ServeEngine engine = ServeEngine::vllm;
  std::string command;  // the memplan command: "serve" or "gguf-fit"
  std::vector<MemplanFlag> flags;
  size_t visible_gpus = 0;  // CUDA_VISIBLE_DEVICES's devices (0: not set)
  size_t split_gpus = 0;    // llama.cpp -ts's shares
};

// The serving command in `text` (the first one that starts an engine). Errors name `path`, the line
// and column and the word.
ServeFrom read_serve_command(std::string_view text, const std::string& path);

// Runs the command `sub` (memplan serve) was given with --from/--from-command: the translated
// flags, then the flags given beside them (which replace the file's).
int run_serve_from(const CLI::App& sub, const ServeArgs& a, Io& io);

}  // namespace memplan::cli
