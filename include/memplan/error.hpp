#pragma once
// Errors are data: what was wrong (a request field, or a subject such as a file), and a message
// naming the value and what was expected. The core throws them; the CLI catches them once and
// prints `memplan: error: <flag>: <message>` with exit 2, naming a field by its option.

#include <cstddef>
#include <stdexcept>
#include <string>

namespace memplan {

// The input an error concerns: a field of the request (EstimateRequest, ParallelLayout) or of
// a command's own settings (ladder, sweep, loss scale). field_key() is its key in plan files and
// JSON "inputs"; the CLI maps a field to its flag.
enum class Field {
  none,  // not a field: the subject is free text (a file, "config.json: hidden_size")
  // the model
  params,
  model,
  config,
  safetensors,
  gguf,
  mlp,
  layers,
  hidden,
  heads,
  kv_heads,
  intermediate,
  vocab,
  family,
  tensors,
  batchnorm,
  // the recipe and the run
  precision,
  optimizer,
  mode,
  trainable,
  quantize,
  lora,
  lora_targets,
  batch,
  seq,
  activation_bytes_per_row,
  attention,
  checkpointing,
  kv_format,
  overhead,
  // the GPUs and the layout
  gpu,
  gpus,
  nodes,
  gpus_per_node,
  max_gpus,
  zero,
  fsdp,
  offload,
  tp,
  pp,
  dp,
  sequence_parallel,
  virtual_stages,
  micro_batches,
  grad_format,
  largest_layer,
  prefetch,
  // planning
  max_seq,
  // loss scaling (scale)
  to,
  grad_min,
  grad_max,
  values,
  // run-time trials (ladder, sweep)
  min,
  start,
  step,
  oom_pattern,
  throughput_pattern,
  rows_per_step,
  batches,
  repeat,
  within,
  steps,
};

// The key of a field in plan files and JSON "inputs": "lora_targets"; "" for Field::none.
inline const char* field_key(Field f) {
  static const char* const keys[] = {
      "",
      "params",
      "model",
      "config",
      "safetensors",
      "gguf",
      "mlp",
      "layers",
      "hidden",
      "heads",
      "kv_heads",
      "intermediate",
      "vocab",
      "family",
      "tensors",
      "batchnorm",
      "precision",
      "optimizer",
      "mode",
      "trainable",
      "quantize",
      "lora",
      "lora_targets",
      "batch",
      "seq",
      "activation_bytes_per_row",
      "attention",
      "checkpointing",
      "kv_format",
      "overhead",
      "gpu",
      "gpus",
      "nodes",
      "gpus_per_node",
      "max_gpus",
      "zero",
      "fsdp",
      "offload",
      "tp",
      "pp",
      "dp",
      "sequence_parallel",
      "virtual_stages",
      "micro_batches",
      "grad_format",
      "largest_layer",
      "prefetch",
      "max_seq",
      "to",
      "grad_min",
      "grad_max",
      "values",
      "min",
      "start",
      "step",
      "oom_pattern",
      "throughput_pattern",
      "rows_per_step",
      "batches",
      "repeat",
      "within",
      "steps",
  };
  static_assert(sizeof(keys) / sizeof(keys[0]) == static_cast<std::size_t>(Field::steps) + 1,
                "one key per Field");
  return keys[static_cast<std::size_t>(f)];
}

// Bad input from the user: a field, an option, a file, a value. Exit code 2.
class Error : public std::runtime_error {
 public:
  // subject: a file path, "config.json: hidden_size", or the name a caller gave a value
  // ("--limit"); message: what is wrong. what() is "<subject>: <message>".
  Error(std::string subject, const std::string& message)
      : std::runtime_error(subject.empty() ? message : subject + ": " + message),
        m_subject(std::move(subject)),
        m_message(message) {}

  // A request field: what() is "<field key>: <message>" ("trainable: must be in (0, 1]");
  // the CLI prints the field's flag instead of its key.
  Error(Field field, const std::string& message) : Error(std::string(field_key(field)), message) {
    m_field = field;
  }

  const std::string& subject() const { return m_subject; }
  Field field() const { return m_field; }
  const std::string& message() const { return m_message; }

 private:
  std::string m_subject;
  std::string m_message;
  Field m_field = Field::none;
};

// An arithmetic result that would not fit in 64 bits.
class OverflowError : public Error {
 public:
  using Error::Error;
};

}  // namespace memplan
