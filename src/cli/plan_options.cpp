#include "cli/plan_options.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <utility>

#include <memplan/error.hpp>
#include <memplan/lora.hpp>
#include <memplan/quantity.hpp>
#include <memplan/storage_format.hpp>
#include "core/base/checked.hpp"
#include "core/base/did_you_mean.hpp"
#include "core/base/file_reader.hpp"
#include "core/base/json_text.hpp"
#include "core/parallel/sharded_estimate.hpp"

#include "cli/model_source.hpp"

namespace memplan::cli {
namespace {

using nlohmann::json;

struct PlanFlag {
  const char* flag;
  const char* key;
  const char* help;
};

// Every shared option: its flag, its key in plan files and JSON "inputs", and its help.
const PlanFlag k_flags[] = {
    {"--params", "params", "Parameter count: 7e9, 7B, 6.74b, 125M"},
    {"--model", "model", "Model preset (see `memplan models`)"},
    {"--config", "config", "Hugging Face config.json of the model"},
    {"--safetensors", "safetensors", "A .safetensors file or a model directory (headers only)"},
    {"--gguf", "gguf", "A .gguf file (header only)"},
    {"--mlp", "mlp", "Multilayer perceptron widths, e.g. 784,512,256,10"},
    {"--layers", "layers", "Transformer layers"},
    {"--hidden", "hidden", "Transformer hidden size"},
    {"--heads", "heads", "Attention heads"},
    {"--kv-heads", "kv_heads", "Key/value heads (grouped-query attention)"},
    {"--intermediate", "intermediate", "MLP inner width"},
    {"--vocab", "vocab", "Vocabulary size"},
    {"--family", "family", "Block layout of an architecture given by flags: gpt2, llama or bert"},
    {"--tensors", "tensors", "Number of parameter tensors (Adam keeps a 4-byte step per tensor)"},
    {"--precision", "precision",
     "fp32, fp16, bf16, amp-fp16, amp-bf16, mixed-fp16, mixed-bf16, or bytes per number"},
    {"--optimizer", "optimizer",
     "none, sgd, sgd-momentum, adam, adamw, adagrad, rmsprop, lion, adamw-8bit, adafactor, or copies"},
    {"--mode", "mode", "train (default) or infer"},
    {"--trainable", "trainable", "Share of parameters trained, in (0, 1] (LoRA: e.g. 0.002 or 0.2%)"},
    {"--quantize", "quantize", "Frozen-weight format: int8, int4, nf4, nf4-dq, fp8"},
    {"--lora", "lora", "LoRA rank: train adapters only, base weights frozen (with --quantize nf4: QLoRA)"},
    {"--lora-targets", "lora_targets",
     "Matrices with LoRA adapters: q,k,v,o,gate,up,down, c_attn, all (default q,v)"},
    {"--batch", "batch", "Micro-batch size (default 1)"},
    {"--seq", "seq", "Sequence length"},
    {"--activation-bytes-per-row", "activation_bytes_per_row", "Measured activation bytes per batch row"},
    {"--attention", "attention", "eager (keeps s x s scores) or sdpa (fused)"},
    {"--checkpointing", "checkpointing", "none, selective or full (recompute: ~30% more compute)"},
    {"--kv-format", "kv_format", "KV-cache format for inference (default: the activation format)"},
    {"--overhead", "overhead", "Per-process overhead: CUDA context + workspaces (default 512MiB)"},
    {"--gpu", "gpu", "GPUs: ids or aliases, comma-separated; all; local or cuda:N"},
    {"--gpus", "gpus", "Number of GPUs the run spans (world size), or auto: the smallest that fits"},
    {"--nodes", "nodes", "Nodes the GPUs are spread over (default 1)"},
    {"--gpus-per-node", "gpus_per_node", "GPUs per node for --gpus auto (default 8)"},
    {"--zero", "zero", "DeepSpeed ZeRO stage 0-3"},
    {"--fsdp", "fsdp", "PyTorch FSDP: no-shard, shard-grad-op, full-shard, hybrid-shard"},
    {"--offload", "offload", "CPU offload: none, optimizer, parameters"},
    {"--tp", "tp", "Tensor-parallel size"},
    {"--pp", "pp", "Pipeline-parallel stages"},
    {"--dp", "dp", "Data-parallel size (default gpus / (tp x pp))"},
    {"--virtual-stages", "virtual_stages", "Interleaved pipeline: model chunks per stage"},
    {"--micro-batches", "micro_batches", "Micro-batches per step in the pipeline"},
    {"--grad-format", "grad_format",
     "Gradient buffers of mixed recipes: half (16 B/param), fp32 (18), half+fp32 (20)"},
    {"--largest-layer", "largest_layer", "Parameters of the largest layer (ZeRO-3/FSDP gather unit)"},
    {"--prefetch", "prefetch", "ZeRO-3/FSDP layers gathered ahead (default 1)"},
};

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

std::map<std::string, std::string> read_plan_file(const std::string& path) {
  json doc = memplan::detail::read_json_file(path, read_limit::k_plan, "the plan", "--plan");
  if (doc.is_discarded() || !doc.is_object())
    throw Error(path, "is not a JSON object (expected a plan: the \"inputs\" of `--format json`)");
  if (doc.contains("inputs") && doc["inputs"].is_object()) doc = doc["inputs"];  // a whole JSON output
  std::map<std::string, std::string> values;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    bool known = false;
    for (const PlanFlag& f : k_flags) known = known || it.key() == f.key;
    if (!known) {
      std::vector<std::string> keys;
      for (const PlanFlag& f : k_flags) keys.push_back(f.key);
      // Keys of the echo that are derived rather than given are ignored.
      if (it.key() == "sequence_parallel" || it.key() == "batchnorm") {
        if (it.value().is_boolean() && it.value().get<bool>()) values[it.key()] = "true";
        continue;
      }
      throw Error(path, "unknown key \"" + it.key() + "\"" + did_you_mean(it.key(), keys));
    }
    if (it.value().is_null()) continue;
    values[it.key()] = json_to_text(it.value(), path + ": " + it.key());
  }
  return values;
}

const std::string* get(const std::map<std::string, std::string>& v, const char* key) {
  auto it = v.find(key);
  return it == v.end() ? nullptr : &it->second;
}

std::string flag_of(const char* key) {
  for (const PlanFlag& f : k_flags)
    if (std::string(f.key) == key) return f.flag;
  return key;
}

uint64_t count_value(const std::map<std::string, std::string>& v, const char* key, uint64_t fallback,
                     uint64_t max, bool positive) {
  const std::string* s = get(v, key);
  if (!s) return fallback;
  const uint64_t n = parse_count(flag_of(key), *s, max);
  if (positive && n == 0) throw Error(flag_of(key), "\"" + *s + "\" must be at least 1");
  return n;
}

std::string choice(const std::map<std::string, std::string>& v, const char* key, const std::string& fallback,
                   const std::vector<std::string>& allowed) {
  const std::string* s = get(v, key);
  if (!s) return fallback;
  for (const std::string& a : allowed)
    if (*s == a) return a;
  std::string list;
  for (size_t i = 0; i < allowed.size(); ++i)
    list += (i ? (i + 1 == allowed.size() ? " or " : ", ") : "") + allowed[i];
  throw Error(flag_of(key),
              "\"" + *s + "\" is not valid (expected " + list + did_you_mean(*s, allowed) + ")");
}

// --gpus/--zero/--fsdp/--tp/...: a parallel layout, when any is given.
void resolve_layout(const std::map<std::string, std::string>& v, EstimateRequest& r) {
  const char* keys[] = {
      "gpus",           "nodes",         "zero",    "fsdp", "offload", "tp", "pp", "dp", "sequence_parallel",
      "virtual_stages", "micro_batches", "prefetch"};
  if (const std::string* g = get(v, "grad_format")) r.grad_format = parse_grad_format("--grad-format", *g);
  r.largest_layer = count_value(v, "largest_layer", 0, 1ull << 50, true);
  bool any = false;
  for (const char* k : keys) any = any || get(v, k);
  if (!any) return;
  if (get(v, "zero") && get(v, "fsdp"))
    throw Error("--zero", "cannot be combined with --fsdp (pick one engine)");
  ParallelLayout l;
  const std::string* gpus = get(v, "gpus");
  if (gpus && *gpus != "auto") l.gpus = count_value(v, "gpus", 1, 1ull << 20, true);
  l.nodes = count_value(v, "nodes", 1, 1ull << 16, true);
  if (const std::string* z = get(v, "zero")) l.sharding = parse_zero_stage("--zero", *z);
  if (const std::string* f = get(v, "fsdp")) l.sharding = parse_fsdp_strategy("--fsdp", *f);
  // --gpus auto without an engine: search every ZeRO stage, lowest first.
  if (gpus && *gpus == "auto" && !get(v, "zero") && !get(v, "fsdp")) l.sharding = ShardingStrategy::zero3;
  if (const std::string* o = get(v, "offload")) l.offload = parse_offload("--offload", *o);
  l.tp = count_value(v, "tp", 1, 1ull << 16, true);
  l.pp = count_value(v, "pp", 1, 1ull << 16, true);
  l.dp = count_value(v, "dp", 0, 1ull << 20, true);
  if (!get(v, "gpus") && (l.tp > 1 || l.pp > 1 || l.dp)) l.gpus = l.tp * l.pp * std::max<uint64_t>(l.dp, 1);
  if (!get(v, "nodes")) {  // GPUs beyond one node fill whole nodes of --gpus-per-node (8)
    const uint64_t per_node = count_value(v, "gpus_per_node", 8, 1024, true);
    l.nodes = l.gpus > per_node && l.gpus % per_node == 0 ? l.gpus / per_node : 1;
  }
  l.sequence_parallel = get(v, "sequence_parallel") && *get(v, "sequence_parallel") == "true";
  l.virtual_stages = count_value(v, "virtual_stages", 1, 1024, true);
  l.micro_batches = count_value(v, "micro_batches", 0, 1ull << 20, true);
  l.prefetch_layers = count_value(v, "prefetch", 1, 1024, false);
  r.parallel = l;
}

const char* const k_presets_help = "GPU/model presets file or directory replacing the built-in ones";

// --lora R [--lora-targets q,v]: the adapters join the model's parameters and are its trainable ones.
void resolve_lora(const std::map<std::string, std::string>& v, EstimateRequest& r) {
  if (!get(v, "lora")) {
    if (get(v, "lora_targets"))
      throw Error("--lora-targets", "needs --lora R (the adapters' rank, e.g. --lora 16)");
    return;
  }
  if (get(v, "trainable"))
    throw Error(
        "--lora",
        "cannot be combined with --trainable (the LoRA adapters are the trainable parameters; drop one)");
  const uint64_t r_value = count_value(v, "lora", 0, 1ull << 20, true);
  const std::string* t = get(v, "lora_targets");
  const LoraTargets targets = parse_lora_targets("--lora-targets", t ? *t : "q,v", r_value);
  const LoraAdapters a = lora_adapters(r.model, targets);
  r.model.parameters = checked_add(r.model.parameters, a.parameters, "parameters");
  r.trainable = static_cast<double>(a.parameters) / static_cast<double>(r.model.parameters);
  r.lora = targets;
}

}  // namespace

void add_plan_options(CLI::App& sub, RawPlan& raw) {
  for (const PlanFlag& f : k_flags) {
    const std::string key = f.key;
    sub.add_option_function<std::string>(
        f.flag, [&raw, key](const std::string& v) { raw.given[key] = v; }, f.help);
  }
  sub.add_flag_function(
      "--batchnorm", [&raw](int64_t) { raw.given["batchnorm"] = "true"; },
      "The MLP has BatchNorm after each hidden layer (accumulation then does not reproduce a large batch)");
  sub.add_flag_function(
      "--sequence-parallel", [&raw](int64_t) { raw.given["sequence_parallel"] = "true"; },
      "Megatron sequence parallelism (with --tp)");
  sub.add_option("--plan", raw.plan_file,
                 "A plan file (JSON, the \"inputs\" of --format json); flags override it");
  sub.add_option("--presets", raw.presets_file, k_presets_help);
}

void add_preset_listing(CLI::App& sub, Runner& run, PresetLister list) {
  struct State {
    RawOutputOptions output;
    std::string presets;
  };
  auto s = std::make_shared<State>();
  add_output_options(sub, s->output);
  sub.add_option("--presets", s->presets, k_presets_help);
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

GpuTargets resolve_gpus(const Presets& presets, const std::string& list) {
  GpuTargets t;
  if (list.empty()) throw Error("--gpu", "empty value (expected GPU ids such as t4,rtx-4090, all, or local)");
  std::stringstream ss(list);
  std::string name;
  while (std::getline(ss, name, ',')) {
    if (name.empty()) throw Error("--gpu", "\"" + list + "\" has an empty name");
    if (name == "all") {
      t.gpus.insert(t.gpus.end(), presets.gpus.begin(), presets.gpus.end());
    } else if (name == "local" || name.rfind("cuda:", 0) == 0) {
      t.asked_local = true;
      resolve_local_gpu(name, t);
    } else {
      t.gpus.push_back(find_gpu(presets, "--gpu", name));
    }
  }
  return t;
}

Plan resolve_plan(const RawPlan& raw) {
  Plan plan;
  std::map<std::string, std::string> v;
  if (!raw.plan_file.empty()) v = read_plan_file(raw.plan_file);
  for (const auto& [k, val] : raw.given) v[k] = val;

  plan.presets = load_presets_for(raw.presets_file);

  EstimateRequest& r = plan.request;
  r.model = resolve_model_source(v, plan.presets);
  if (get(v, "batchnorm")) {
    if (r.model.mlp_widths.empty()) throw Error("--batchnorm", "applies to --mlp models");
    r.model.has_batchnorm = true;
  }
  const std::string mode = choice(v, "mode", "train", {"train", "infer", "inference", "training"});
  r.mode = (mode == "infer" || mode == "inference") ? Mode::infer : Mode::train;
  std::string precision = get(v, "precision") ? *get(v, "precision") : "";
  if (precision.empty()) {
    const std::string stored = r.model.weight_format;
    const bool half_or_float = stored == "fp32" || stored == "fp16" || stored == "bf16";
    precision = half_or_float ? stored : r.model.weight_bytes ? "fp16" : "fp32";
    if (!stored.empty() && half_or_float)
      r.model.notes.push_back("precision " + stored +
                              ": the format the weights are stored in (--precision to change)");
    r.stored_weights = r.model.weight_bytes != 0 && !get(v, "quantize");
    if (r.model.weight_bytes && !half_or_float)
      r.model.notes.push_back("weights counted as stored (" + group_thousands(r.model.weight_bytes) +
                              " B); activations and KV cache in fp16 (--precision to change)");
  }
  r.recipe = parse_recipe("--precision", precision);
  const std::string optimizer =
      get(v, "optimizer") ? *get(v, "optimizer") : (r.mode == Mode::infer ? "none" : "adamw");
  r.optimizer = parse_optimizer("--optimizer", optimizer);
  if (const std::string* t = get(v, "trainable")) r.trainable = parse_fraction("--trainable", *t);
  if (const std::string* q = get(v, "quantize")) r.quantize = find_storage_format("--quantize", *q).name;
  resolve_lora(v, r);
  r.batch = count_value(v, "batch", 1, 1ull << 40, true);
  r.seq = count_value(v, "seq", 0, 1ull << 32, true);
  if (const std::string* a = get(v, "activation_bytes_per_row")) {
    r.activation_bytes_per_row = parse_size("--activation-bytes-per-row", *a);
    if (!r.activation_bytes_per_row)
      throw Error("--activation-bytes-per-row", "\"" + *a + "\" must be at least 1");
  }
  r.attention = choice(v, "attention", "sdpa", {"eager", "sdpa"});
  r.checkpointing = choice(v, "checkpointing", "none", {"none", "selective", "full"});
  if (const std::string* k = get(v, "kv_format")) r.kv_format = find_storage_format("--kv-format", *k).name;
  if (const std::string* o = get(v, "overhead")) r.overhead_bytes = parse_size("--overhead", *o);
  if (r.mode == Mode::infer && r.optimizer.name != "none" && get(v, "optimizer"))
    r.model.notes.push_back("--mode infer: the optimizer is not used");
  if (r.mode == Mode::infer && get(v, "trainable"))
    r.model.notes.push_back("--mode infer: --trainable is not used");

  resolve_layout(v, r);

  plan.gpu_given = get(v, "gpu") != nullptr;
  if (plan.gpu_given) {
    plan.targets = resolve_gpus(plan.presets, *get(v, "gpu"));
  } else {
    for (const std::string& id : plan.presets.default_gpus)
      plan.targets.gpus.push_back(find_gpu(plan.presets, "--gpu", id));
  }

  if (get(v, "gpus") && *get(v, "gpus") == "auto") {
    if (plan.targets.gpus.size() != 1)
      throw Error("--gpus", "auto needs exactly one GPU type (--gpu a100-80gb)");
    const uint64_t per_node = count_value(v, "gpus_per_node", 8, 1024, true);
    auto found = smallest_layout(r, plan.targets.gpus[0].usable_bytes(), per_node);
    if (found) {
      r = *found;
      r.model.notes.push_back("--gpus auto: the smallest layout of " + plan.targets.gpus[0].id +
                              " that fits is " + std::to_string(r.parallel->gpus) + " GPUs with " +
                              sharding_name(r.parallel->sharding));
    } else {
      r.model.notes.push_back("--gpus auto: no layout of up to 4096 x " + plan.targets.gpus[0].id + " fits");
    }
  }

  // The inputs, every default resolved, in the shape a plan file takes back.
  json& in = plan.inputs;
  for (const PlanFlag& f : k_flags) in[f.key] = nullptr;
  for (const auto& [k, val] : v) in[k] = val;
  in["precision"] = r.recipe.name;
  in["optimizer"] = r.optimizer.name;
  in["mode"] = r.mode == Mode::infer ? "infer" : "train";
  in["trainable"] = r.trainable;
  if (r.lora) {  // the adapters set the trainable share: a plan file gives --lora back, not both
    in["trainable"] = nullptr;
    in["lora"] = r.lora->rank;
    in["lora_targets"] = get(v, "lora_targets") ? *get(v, "lora_targets") : std::string("q,v");
  }
  in["batch"] = r.batch;
  if (r.seq) in["seq"] = r.seq;
  if (r.activation_bytes_per_row) in["activation_bytes_per_row"] = r.activation_bytes_per_row;
  in["attention"] = r.attention;
  in["checkpointing"] = r.checkpointing;
  in["overhead"] = std::to_string(r.overhead_bytes);
  if (!r.quantize.empty()) in["quantize"] = r.quantize;
  if (get(v, "params")) in["params"] = r.model.parameters;
  if (get(v, "tensors")) in["tensors"] = r.model.tensors;
  in["sequence_parallel"] = get(v, "sequence_parallel") != nullptr;
  in["batchnorm"] = r.model.has_batchnorm;
  std::string gpus;
  for (const GpuSpec& g : plan.targets.gpus) gpus += (gpus.empty() ? "" : ",") + g.id;
  in["gpu"] = plan.gpu_given ? *get(v, "gpu") : gpus;
  return plan;
}

}  // namespace memplan::cli
