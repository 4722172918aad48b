#pragma once
// --emit FRAMEWORK: advise's chosen suggestion (or max-batch's batch) written as the config of the
// framework the user runs, one copy-paste away: for the YAML frameworks the keys to change (all
// of them without --from), for DeepSpeed a complete JSON (the --from file with the changes applied),
// for transformers' Trainer and memplan itself a command line. Every knob the framework cannot
// express is said, as a YAML comment or a note on stderr; nothing is dropped silently.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memplan/estimate.hpp>

#include "cli/command.hpp"
#include "cli/from_config.hpp"

namespace memplan::cli {

// The frameworks --emit writes; the names are --from's ("deepspeed", "axolotl", ...), "trainer"
// is transformers' TrainingArguments flags, "flags" memplan's own.
enum class EmitFramework { deepspeed, axolotl, llamafactory, torchtune, accelerate, trainer, flags };

const char* emit_framework_name(EmitFramework f);

// --emit's value: a framework's name, or "" / "from" for the --from file's. An Error listing the
// choices otherwise (and for "" without --from).
EmitFramework parse_emit_framework(const std::string& value, const FromReport* from);

struct EmitRequest {
  EmitFramework framework = EmitFramework::flags;
  EstimateRequest given;             // the run as given
  EstimateRequest chosen;            // the plan to write (its gradient accumulation set)
  const FromReport* from = nullptr;  // --from, when given
  std::string command;               // "advise", "max-batch"
  std::string summary;               // what was chosen: "suggestion 1: ... (required 21.8 GiB, fits)"
  std::vector<std::string> notes;    // the command's own (accumulation keeps gradients alive, ...)
  uint64_t rank = 0;                 // advise: the suggestion's place among the fitting ones (0: as given)
  uint64_t required_bytes = 0;       // the written plan's, on the GPU
  uint64_t memory_bytes = 0;         // the GPU's usable memory
};

struct EmittedConfig {
  EmitFramework framework = EmitFramework::flags;
  std::string text;                // what to paste
  nlohmann::json keys;             // the keys written, by dotted path (the changed ones with --from)
  std::vector<std::string> notes;  // knobs it cannot express, how to launch, the command's notes
  bool notes_in_text = false;      // YAML: the notes are comment lines of `text` too
};

// The config. Throws Error (exit 2) when the framework cannot express the run at all (an
// inference run for a training framework).
EmittedConfig emit_config(const EmitRequest& e);

// The JSON output's "emit" field.
nlohmann::json emitted_json(const EmittedConfig& c, const EmitRequest& e);

// The text output: the config on out (alone, so that it can be redirected to a file), what was
// chosen and the notes (unless they are comment lines) on err.
void print_emitted(const EmittedConfig& c, const EmitRequest& e, Io& io);

}  // namespace memplan::cli
