#include "cli/plan_options.hpp"
#include "cli/framework_options.hpp"
#include "cli/runtime_options.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <utility>

#include <memplan/error.hpp>
#include <memplan/fit.hpp>
#include <memplan/lora.hpp>
#include <memplan/probe.hpp>
#include <memplan/quantity.hpp>
#include <memplan/storage_format.hpp>
#include "core/base/checked.hpp"
#include "core/base/did_you_mean.hpp"
#include "core/base/file_reader.hpp"
#include "core/base/json_text.hpp"
#include "core/formats/llama_quant.hpp"
#include "core/models/custom_gpu.hpp"
#include "core/models/gguf_mix.hpp"
#include "core/parallel/sharded_estimate.hpp"

#include "cli/layout_options.hpp"
#include "cli/mode_options.hpp"
#include "cli/model_context.hpp"
#include "cli/model_source.hpp"
#include "cli/options.hpp"
#include "cli/vision_inputs.hpp"

namespace memplan::cli {
namespace {

using nlohmann::json;

std::string json_to_text(const json& v, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_float()) {
    std::ostringstream ss;
    ss.precision(17);
    ss << v.get<double>();
    return ss.str();
  }
  if (v.is_array()) {
    std::string out;
    for (const json& e : v) out += (out.empty() ? "" : ",") + json_to_text(e, where);
    return out;
  }
  throw Error(where, "must be a string, a number or a list");
}

// A plan document's values as text by key, for the same rules as the flags.
std::map<std::string, std::string> plan_document_values(json doc, const std::string& path) {
  if (doc.is_discarded() || !doc.is_object())
    throw Error(path, "is not a JSON object (expected a plan: the \"inputs\" of `--format json`)");
  if (doc.contains("inputs") && doc["inputs"].is_object()) doc = doc["inputs"];  // a whole JSON output
  std::map<std::string, std::string> values;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const OptionSpec* option = option_for_key(it.key());
    if (!option) {
      std::vector<std::string> keys;
      for (const OptionSpec& o : plan_options())
        if (!o.is_switch) keys.push_back(field_key(o.field));
      throw Error(path, "unknown key \"" + it.key() + "\"" + did_you_mean(it.key(), keys));
    }
    if (it.value().is_null()) continue;
    if (option->is_switch && it.value().is_boolean()) {  // the echo writes switches as true/false
      if (it.value().get<bool>()) values[it.key()] = "true";
      continue;
    }
    values[it.key()] = json_to_text(it.value(), path + ": " + it.key());
  }
  return values;
}

// The plan file's values as text by key (the one bounded reader, then the document's values).
std::map<std::string, std::string> read_plan_file(const std::string& path) {
  return plan_document_values(memplan::detail::read_json_file(path, read_limit::k_plan, "the plan", "--plan"),
                              path);
}

const char* const k_presets_help = "GPU/model presets file or directory replacing the built-in ones";

// --lora R [--lora-targets q,v]: the adapters join the model's parameters and are its trainable ones.
void resolve_lora(const PlanValues& v, EstimateRequest& r) {
  if (!v.lora) {
    if (v.lora_targets)
      throw Error(Field::lora_targets, "needs --lora R (the adapters' rank, e.g. --lora 16)");
    if (v.lora_fp32) throw Error(Field::lora_dtype, "needs --lora R (the adapters' rank, e.g. --lora 16)");
    if (v.lora_dropout)
      throw Error(Field::lora_dropout, "needs --lora R (the adapters' rank, e.g. --lora 16)");
    return;
  }
  if (v.trainable)
    throw Error(
        Field::lora,
        "cannot be combined with --trainable (the LoRA adapters are the trainable parameters; drop one)");
  LoraTargets targets =
      v.lora_targets ? *v.lora_targets : parse_lora_targets(flag_for(Field::lora_targets), "q,v", 0);
  targets.rank = *v.lora;
  targets.fp32_adapters = v.lora_fp32.value_or(true);
  targets.dropout = v.lora_dropout.value_or(0.0);
  const LoraAdapters a = lora_adapters(r.model, targets);
  r.model.parameters = checked_add(r.model.parameters, a.parameters, "parameters");
  r.trainable = static_cast<double>(a.parameters) / static_cast<double>(r.model.parameters);
  r.lora = targets;
}

// Every value by the one rule of its option, whoever gave it.
PlanValues parse_values(const std::map<std::string, std::string>& text) {
  PlanValues values;
  for (const auto& [key, value] : text) {
    const OptionSpec* option = option_for_key(key);
    if (option) parse_option(*option, value, values);
  }
  return values;
}

// The arguments of the command line being parsed, while a PlanArgs is alive.
thread_local const std::vector<std::string>* t_plan_args = nullptr;

// CLI11's help flag is -h,--help; short flags can be grouped (-qh).
bool asks_help(const std::string& arg) {
  if (arg.rfind("--", 0) == 0) return arg.rfind("--help", 0) == 0;
  return arg.size() > 1 && arg[0] == '-' && arg.find('h') != std::string::npos;
}

// Whether `flag` is named by an argument: "--seq" or "--seq=2048".
bool names_flag(const std::string& arg, const char* flag) {
  const size_t n = std::char_traits<char>::length(flag);
  return arg.compare(0, n, flag) == 0 && (arg.size() == n || arg[n] == '=');
}

bool must_register(const OptionSpec& o) {
  if (!t_plan_args) return true;
  for (const std::string& arg : *t_plan_args)
    if (asks_help(arg) || names_flag(arg, o.flag)) return true;
  return false;
}

}  // namespace

PlanArgs::PlanArgs(const std::vector<std::string>& args) : previous_(t_plan_args) { t_plan_args = &args; }

PlanArgs::PlanArgs(std::nullptr_t) : previous_(t_plan_args) { t_plan_args = nullptr; }

PlanArgs::~PlanArgs() { t_plan_args = previous_; }

namespace {

// An empty path ("--plan ''") is refused, not taken as "no file" (CLI11 prints "--plan: <this>").
CLI::Validator non_empty_path() {
  return CLI::Validator(
      [](const std::string& path) {
        return path.empty() ? std::string("empty value (expected the path of a file)") : std::string();
      },
      "");
}

}  // namespace

void add_plan_options(CLI::App& sub, RawPlan& raw, PlanScope scope) {
  // The plan file and the presets first: they list first in the help's Model group.
  sub.add_option("--plan", raw.plan_file,
                 "A plan file (JSON, the \"inputs\" of --format json); flags override it")
      ->check(non_empty_path());
  if (scope == PlanScope::torch_step)
    sub.add_option("--from", raw.from_file,
                   "A DeepSpeed or TrainingArguments JSON, an Axolotl, LLaMA-Factory, torchtune, TRL or "
                   "accelerate YAML to read the run from; flags override it")
        ->check(non_empty_path());
  sub.add_option("--presets", raw.presets_file, k_presets_help)->check(non_empty_path());
  sub.add_flag("--offline", raw.offline, "--model org/name from the local caches only, never the network");
  for (const OptionSpec& o : plan_options()) {
    if (!scope_takes(scope, o.field) || !must_register(o)) continue;
    const std::string key = field_key(o.field);
    if (o.is_switch)
      sub.add_flag_function(
          o.flag, [&raw, key](int64_t n) { raw.given[key] = n > 0 ? "true" : "false"; }, o.help);
    else
      sub.add_option_function<std::string>(
          o.flag, [&raw, key](const std::string& v) { raw.given[key] = v; }, o.help);
  }
}

void add_preset_listing(CLI::App& sub, Runner& run, PresetLister list) {
  struct State {
    RawOutputOptions output;
    std::string presets;
  };
  auto s = std::make_shared<State>();
  add_output_options(sub, s->output);
  sub.add_option("--presets", s->presets, k_presets_help)->check(non_empty_path());
  run = [s, list = std::move(list)](Io& io) {
    const OutputOptions out = resolve_output_options(s->output, io);
    return list(load_presets_for(s->presets), out, io);
  };
}

Presets load_presets_for(const std::string& presets_file) {
  std::string path = presets_file;
  if (path.empty())
    if (const char* dir = std::getenv("MEMPLAN_DATA_DIR"); dir && *dir) path = dir;
  return path.empty() ? builtin_presets() : load_presets_override(path);
}

namespace {

// Apple silicon lets the GPU wire up to `iogpu.wired_limit_mb` of unified memory instead of the
// default working set (recommendedMaxWorkingSetSize); the limit replaces each Apple GPU's budget.
void apply_wired_limit(uint64_t mib, GpuTargets& targets) {
  const uint64_t bytes = mib << 20;
  bool any = false;
  for (GpuSpec& g : targets.gpus) {
    if (g.vendor != "apple") continue;
    any = true;
    if (bytes > g.memory_total_bytes)
      throw Error(Field::wired_limit_mb, std::to_string(mib) + " MiB is more than the " +
                                             format_bytes(g.memory_total_bytes, Units::gib) + " of " + g.id);
    g.budget_bytes = bytes;
    g.budget_note = "GPU wired limit " + std::to_string(mib) +
                    " MiB (sudo sysctl iogpu.wired_limit_mb=" + std::to_string(mib) +
                    "); macOS and other programs get the rest of the unified memory";
  }
  if (!any) throw Error(Field::wired_limit_mb, "applies to Apple GPUs, and none is among the GPUs (--gpu)");
}

const GpuSpec* preset_gpu(const Presets& presets, const std::string& name) {
  try {
    return &find_gpu(presets, "", name);
  } catch (const Error&) {
    return nullptr;
  }
}

}  // namespace

namespace {

// A real device's SMs, which NVML does not report for a whole GPU: those of the NVIDIA presets with
// its compute capability and its NVML total (within 1%), the most of them where several match (an
// H100 PCIe and SXM): its CUDA context is then predicted, not assumed (cuda_context.hpp). A MIG slice
// matches none and keeps the H200's assumption.
void match_device_sms(const Presets& presets, GpuSpec& device) {
  std::string matched;
  for (const GpuSpec& p : presets.gpus) {
    if (p.vendor != "nvidia" || !p.sm_count || p.compute_capability != device.compute_capability) continue;
    const uint64_t a = p.memory_total_bytes, b = device.memory_total_bytes;
    if ((a > b ? a - b : b - a) * 100 > a) continue;
    if (p.sm_count > device.sm_count) {
      device.sm_count = p.sm_count;
      matched = p.id;
    }
  }
  if (!matched.empty())
    device.notes += (device.notes.empty() ? "" : "; ") + std::to_string(device.sm_count) + " SMs as preset " +
                    matched + " (same compute capability and NVML total)";
}

}  // namespace

GpuTargets resolve_gpus(const Presets& presets, const std::string& list) {
  GpuTargets t;
  if (list.empty())
    throw Error(Field::gpu, "empty value (expected GPU ids such as t4,rtx-4090, all, or local)");
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const std::string name = gpu_name_text(item);  // "24 GB" is 24GB
    if (name.empty()) throw Error(Field::gpu, "\"" + list + "\" has an empty name");
    if (name == "all") {
      t.gpus.insert(t.gpus.end(), presets.gpus.begin(), presets.gpus.end());
    } else if (is_local_gpu_spec(name)) {  // the probe's rule: local, cuda, cuda:N
      t.asked_local = true;
      const size_t before = t.gpus.size();
      resolve_local_gpu(name, t);
      if (t.gpus.size() > before) match_device_sms(presets, t.gpus.back());
    } else if (const GpuSpec* preset = preset_gpu(presets, name)) {  // ids and aliases first ("24gb")
      t.gpus.push_back(*preset);
    } else if (auto custom = parse_custom_gpu(name)) {  // a size: 12GiB, 24GB:bf16
      t.gpus.push_back(std::move(*custom));
    } else {
      t.gpus.push_back(find_gpu(presets, flag_for(Field::gpu), name));
    }
  }
  return t;
}

Plan resolve_plan(const RawPlan& raw) {
  Plan plan;
  std::map<std::string, std::string> text;
  if (!raw.from_file.empty()) text = read_from_file(raw.from_file).values;
  if (!raw.plan_file.empty())
    for (const auto& [k, val] : read_plan_file(raw.plan_file)) text[k] = val;
  for (const auto& [k, val] : raw.given) text[k] = val;
  const PlanValues given = parse_values(text);

  plan.presets = load_presets_for(raw.presets_file);

  EstimateRequest& r = plan.request;
  r.model = resolve_model_source(given, plan.presets, raw.offline);
  // --framework's profile fills what was not given (framework_options.cpp), its notes after the
  // model's.
  std::vector<std::string> profile_notes;
  const PlanValues v = with_profile(given, text, r.model, profile_notes);
  if (v.batchnorm) {
    if (r.model.mlp_widths.empty()) throw Error(Field::batchnorm, "applies to --mlp models");
    r.model.has_batchnorm = true;
  }
  r.mode = v.mode.value_or(Mode::train);
  if (v.precision) {
    r.recipe = *v.precision;
  } else {
    const std::string stored = r.model.weight_format;
    const bool half_or_float = stored == "fp32" || stored == "fp16" || stored == "bf16";
    const std::string precision = half_or_float                           ? stored
                                  : r.model.weight_bytes || v.llama_ftype ? "fp16"
                                                                          : "fp32";
    r.stored_weights = r.model.weight_bytes != 0 && !v.quantize;
    if (r.model.weight_bytes && !half_or_float)
      r.model.notes.push_back("weights counted as stored (" + group_thousands(r.model.weight_bytes) +
                              " B); activations and KV cache in fp16 (--precision to change)");
    r.recipe = parse_recipe(flag_for(Field::precision), precision);
  }
  // Said whether the precision was defaulted or given the same (a plan file echoes it as given).
  if (const std::string& stored = r.model.weight_format;
      (stored == "fp32" || stored == "fp16" || stored == "bf16") && r.recipe.name == stored)
    r.model.notes.push_back("precision " + stored +
                            ": the format the weights are stored in (--precision to change)");
  r.optimizer = v.optimizer
                    ? *v.optimizer
                    : parse_optimizer(flag_for(Field::optimizer), r.mode == Mode::infer ? "none" : "adamw");
  if (v.trainable) r.trainable = *v.trainable;
  r.quantize = v.quantize;
  if (v.llama_ftype) use_llama_ftype(r, *v.llama_ftype);
  resolve_lora(v, r);
  r.batch = v.batch.value_or(1);
  r.seq = v.seq.value_or(0);
  if (v.seq) check_trained_positions(r, *v.seq);  // model_context.cpp: GPT-2 past 1,024, llama past 32x
  add_image_tokens(v, r);                         // vision_inputs.cpp
  r.all_logits = v.all_logits.value_or(false);
  // --logits all is a plain forward (model(input_ids)): the whole batch in one pass, no engine's chunk.
  r.prefill_chunk = v.prefill_chunk.value_or(r.all_logits ? 0 : k_default_prefill_chunk);
  r.activation_bytes_per_row = v.activation_bytes_per_row.value_or(0);
  r.attention = v.attention.value_or(Attention::sdpa);
  r.checkpointing = v.checkpointing.value_or(Checkpointing::none);
  r.offloaded_checkpoints = v.offloaded_checkpoints;
  r.kv_format = v.kv_format;
  r.overhead_given = v.overhead.has_value();
  r.device = v.device.value_or(Device::cuda);
  r.loss = v.loss.value_or(Loss::plain);
  r.framework = v.framework.value_or(Framework::hf);
  r.keep_logits = v.keep_logits;
  r.train_vision = v.train_vision;
  r.expandable_segments = v.expandable_segments;
  r.grad_accum = v.grad_accum.value_or(1);
  resolve_torch_release(v, r);  // runtime_options.cpp
  resolve_transformers_release(v, r);
  resolve_bitsandbytes_release(v, r);
  apply_profile_runtime(v, r);  // framework_options.cpp
  r.cuda = resolve_cuda_runtime(v, r.torch);
  if (r.mode == Mode::infer && r.optimizer.name != "none" && v.optimizer)
    r.model.notes.push_back("--mode infer: the optimizer is not used");
  if (r.mode == Mode::infer && v.trainable) r.model.notes.push_back("--mode infer: --trainable is not used");

  refuse_other_mode_flags(given, r);  // mode_options.cpp
  r.model.notes.insert(r.model.notes.end(), profile_notes.begin(), profile_notes.end());
  resolve_layout(v, r);

  plan.gpu_given = v.gpu.has_value();
  if (plan.gpu_given) {
    plan.targets = resolve_gpus(plan.presets, *v.gpu);
  } else {
    for (const std::string& id : plan.presets.default_gpus)
      plan.targets.gpus.push_back(find_gpu(plan.presets, flag_for(Field::gpu), id));
  }

  if (v.wired_limit_mb) apply_wired_limit(*v.wired_limit_mb, plan.targets);
  // The breakdown's overhead: --overhead, else the largest CUDA context of the GPUs compared (each
  // fit row adds its own GPU's).
  r.overhead_bytes = v.overhead ? *v.overhead : summary_overhead(plan.targets.gpus, r);

  if (v.gpus_auto) {
    if (plan.targets.gpus.size() != 1)
      throw Error(Field::gpus, "auto needs exactly one GPU type (--gpu a100-80gb)");
    const uint64_t per_node = v.gpus_per_node.value_or(8);
    auto found =
        smallest_layout(request_on(r, plan.targets.gpus[0]), plan.targets.gpus[0].usable_bytes(), per_node);
    if (found) {
      r = *found;
      r.model.notes.push_back(
          "--gpus auto: the smallest layout of " + plan.targets.gpus[0].id + " that fits is " +
          std::to_string(r.parallel->gpus) + " GPUs with " +
          (r.mode == Mode::infer ? "tensor parallelism" : std::string(sharding_name(r.parallel->sharding))));
    } else {
      r.model.notes.push_back("--gpus auto: no layout of up to 4096 x " + plan.targets.gpus[0].id + " fits");
    }
  }

  // The inputs, every default resolved, in the shape a plan file takes back.
  json& in = plan.inputs;
  for (const OptionSpec& o : plan_options())
    if (!o.is_switch) in[field_key(o.field)] = nullptr;
  for (const auto& [k, val] : text) {
    const OptionSpec* o = option_for_key(k);
    if (o && o->is_switch && val == "false") continue;  // --switch=false: off, as when not given
    in[k] = val;
  }
  in["precision"] = r.recipe.name;
  in["optimizer"] = r.optimizer.name;
  in["mode"] = r.mode == Mode::infer ? "infer" : "train";
  // Inference trains nothing: the share is echoed only when given, so the plan reads back silently.
  in["trainable"] = r.mode == Mode::infer && !v.trainable ? json() : json(r.trainable);
  if (r.lora) {  // the adapters set the trainable share: a plan file gives --lora back, not both
    in["trainable"] = nullptr;
    in["lora"] = r.lora->rank;
    in["lora_targets"] = given.lora_targets ? text.at("lora_targets")
                         : v.lora_targets   ? lora_target_names(*r.lora, *r.model.arch)
                                            : std::string("q,v");
  }
  in["batch"] = r.batch;
  if (r.seq) in["seq"] = r.seq;
  echo_image_inputs(v, r, in);  // vision_inputs.cpp: --seq as given, without the image tokens
  if (r.activation_bytes_per_row) in["activation_bytes_per_row"] = r.activation_bytes_per_row;
  in["attention"] = to_string(r.attention);
  in["checkpointing"] = to_string(r.checkpointing);
  // A predicted overhead is echoed as null, so a plan file read back predicts it again per GPU.
  in["overhead"] = r.overhead_given ? json(std::to_string(r.overhead_bytes)) : json();
  in["cuda"] = to_string(r.cuda.version);
  in["cuda_module_loading"] = to_string(r.cuda.loading);
  in["torch"] = to_string(r.torch);
  if (!(r.transformers == TransformersRelease{})) in["transformers"] = to_string(r.transformers);
  if (!(r.bitsandbytes == BitsandbytesRelease{})) in["bitsandbytes"] = to_string(r.bitsandbytes);
  in["prefill_chunk"] = r.prefill_chunk;
  if (r.mode == Mode::infer) in["logits"] = r.all_logits ? "all" : "last";
  if (r.quantize) in["quantize"] = storage_format(*r.quantize).name;
  if (r.llama_ftype) in["quantize"] = llama_ftype(*r.llama_ftype)->name;
  if (r.kv_format) in["kv_format"] = storage_format(*r.kv_format).name;
  if (v.params) in["params"] = r.model.parameters;
  if (v.tensors) in["tensors"] = r.model.tensors;
  in["sequence_parallel"] = v.sequence_parallel;
  in["batchnorm"] = r.model.has_batchnorm;
  in["device"] = to_string(r.device);
  in["loss"] = to_string(r.loss);
  if (given.keep_logits) in["keep_logits"] = true;  // only when given: plans without it read back unchanged
  if (r.framework != Framework::hf) in["framework"] = to_string(r.framework);  // likewise
  if (v.train_vision) in["train_vision"] = true;                               // likewise
  if (v.expandable_segments) in["expandable_segments"] = true;                 // likewise
  in["grad_accum"] = r.grad_accum;
  in["zero_grad"] = r.grads_kept ? "zeros" : "none";
  if (v.assume_llama) in["assume_llama"] = true;  // only when given: plans without it read back unchanged
  std::string gpus;
  for (const GpuSpec& g : plan.targets.gpus) gpus += (gpus.empty() ? "" : ",") + g.id;
  in["gpu"] = plan.gpu_given ? *v.gpu : gpus;
  return plan;
}

std::optional<FromReport> read_from(const RawPlan& raw) {
  if (raw.from_file.empty()) return std::nullopt;
  FromReport r = read_from_file(raw.from_file);
  for (const auto& [k, val] : raw.given)
    if (auto it = r.values.find(k); it != r.values.end() && it->second != val)
      r.overridden.push_back(flag_for(field_for_key(k)) + " " + val + " replaces " + it->second);
  return r;
}

Runner with_from_section(const RawPlan& raw, const RawOutputOptions& output, Runner body) {
  return [&raw, &output, body = std::move(body)](Io& io) {
    if (raw.from_file.empty()) return body(io);
    std::ostringstream captured;
    Io inner{captured, io.err, io.tty, io.user_command};
    const int rc = body(inner);
    const OutputOptions out = resolve_output_options(output, io);
    const std::optional<FromReport> from = read_from(raw);
    if (out.quiet || out.format == Format::csv) {
      io.out << captured.str();
    } else if (out.format == Format::json) {
      json doc = json::parse(captured.str());
      doc["from"] = from_json(*from);
      io.out << doc.dump(2) << "\n";
    } else {
      io.out << from_text(*from) << captured.str();
    }
    return rc;
  };
}

std::map<std::string, std::string> plan_file_values(std::string_view text, const std::string& path) {
  return plan_document_values(memplan::detail::parse_json_text(text, path, "the plan"), path);
}

}  // namespace memplan::cli
