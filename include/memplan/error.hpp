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
  // files and the cast command's own switches
  presets,
  from_bits,
  saturate,
  // Apple silicon
  wired_limit_mb,
  // vision-language models
  images,
  image_size,
  // what runs the step
  device,
  loss,
  grad_accum,
  zero_grad,
  optimizer_loop,
  // reading model files
  assume_llama,
  prefill_chunk,
  logits,
  // how LoRA adapters run
  lora_dtype,
  lora_dropout,
  keep_logits,
  // whose code runs the step
  framework,
  // vision-language training
  train_vision,
  // torch's caching allocator configuration
  expandable_segments,
  // the CUDA runtime (the context it predicts is the overhead)
  cuda,
  cuda_module_loading,
  // the PyTorch release of the step
  torch,
  // the transformers release whose modelling code runs
  transformers,
  // the bitsandbytes release whose 4-bit layers run
  bitsandbytes,
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
      "presets",
      "from_bits",
      "saturate",
      "wired_limit_mb",
      "images",
      "image_size",
      "device",
      "loss",
      "grad_accum",
      "zero_grad",
      "optimizer_loop",
      "assume_llama",
      "prefill_chunk",
      "logits",
      "lora_dtype",
      "lora_dropout",
      "keep_logits",
      "framework",
      "train_vision",
      "expandable_segments",
      "cuda",
      "cuda_module_loading",
      "torch",
      "transformers",
      "bitsandbytes",
  };
  static_assert(sizeof(keys) / sizeof(keys[0]) == static_cast<std::size_t>(Field::bitsandbytes) + 1,
                "one key per Field");
  return keys[static_cast<std::size_t>(f)];
}

// The field whose key is `key`, or Field::none.
inline Field field_for_key(const std::string& key) {
  for (std::size_t i = 1; i <= static_cast<std::size_t>(Field::bitsandbytes); ++i)
    if (key == field_key(static_cast<Field>(i))) return static_cast<Field>(i);
  return Field::none;
}

// A field named inside a message or note: "{field:pp}". The core never writes a flag; the CLI
// prints the reference as the field's flag ("--pp"), Error::what() as its key ("pp").
inline std::string field_ref(Field f) { return std::string("{field:") + field_key(f) + "}"; }

// `text` with each field reference replaced by name(field); anything else is kept as it is.
template <class Name>
std::string expand_field_refs(const std::string& text, Name name) {
  static const std::string open = "{field:";
  std::string out;
  std::size_t at = 0;
  for (;;) {
    const std::size_t start = text.find(open, at);
    const std::size_t end = start == std::string::npos ? start : text.find('}', start);
    if (end == std::string::npos) break;
    const Field f = field_for_key(text.substr(start + open.size(), end - start - open.size()));
    out.append(text, at, start - at);
    if (f == Field::none)
      out.append(text, start, end + 1 - start);
    else
      out += name(f);
    at = end + 1;
  }
  out.append(text, at, std::string::npos);
  return out;
}

// The text of field references as a library user reads them: the field's key.
inline std::string with_field_keys(const std::string& text) {
  return expand_field_refs(text, [](Field f) { return std::string(field_key(f)); });
}

// Bad input from the user: a field, an option, a file, a value. Exit code 2.
class Error : public std::runtime_error {
 public:
  // subject: a file path, "config.json: hidden_size", or the name a caller gave a value
  // ("--limit"); message: what is wrong, where field references (field_ref) name other inputs.
  // what() is "<subject>: <message>", references read as field keys; message() keeps them.
  Error(std::string subject, const std::string& message)
      : std::runtime_error(with_field_keys(subject.empty() ? message : subject + ": " + message)),
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
