// memplan serve: vLLM's start-up memory budget on one GPU type (per GPU with --tp/--pp): the
// KV-cache blocks, the tokens they hold, the concurrency at max_model_len, the longest
// max_model_len that fits and the `vllm serve` flags; --check-log compares a real start-up log.
// --engine sglang: SGLang's budget instead (the KV pool in tokens, the launch_server flags).
#include <memory>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/file_reader.hpp"
#include "core/base/quantity_kinds.hpp"
#include "core/serving/vllm_budget.hpp"
#include "core/serving/vllm_log.hpp"

#include "cli/command.hpp"
#include "cli/model_context.hpp"
#include "cli/plan_options.hpp"
#include "cli/render_serve.hpp"
#include "cli/serve_args.hpp"
#include "cli/serve_from.hpp"
#include "cli/serve_model_arg.hpp"
#include "cli/serve_notes.hpp"
#include "cli/serve_plan.hpp"

namespace memplan::cli {
namespace {

// --vllm-version: the newest rules at or below the release; "v0" (0.6.4's V0) and "v1" (0.10.1's
// V1, the former default) as before.
VllmRules vllm_rules_from_flag(const std::string& v) {
  if (v == "v0") return vllm_v0_rules();
  const std::optional<VllmVersion> parsed = parse_vllm_version(v == "v1" ? "0.10.1" : v);
  if (!parsed)
    throw Error("--vllm-version", "\"" + v + "\" is not a vLLM release (expected X.Y or X.Y.Z, e.g. 0.11.0)");
  const std::optional<VllmRules> rules = vllm_rules_for(*parsed);
  if (!rules)
    throw Error("--vllm-version", "\"" + v + "\" is older than the releases memplan models (0.6.0 to " +
                                      std::string(vllm_newest_rules().label) + ")");
  return *rules;
}

VllmSettings settings_from(const ServeArgs& a) {
  VllmSettings s;
  if (!a.utilization.empty()) {
    const double u = parse_real("--gpu-memory-utilization", a.utilization);
    if (!(u > 0.0 && u <= 1.0))
      throw Error("--gpu-memory-utilization",
                  "\"" + a.utilization + "\" is not in (0, 1] (expected e.g. 0.9)");
    s.gpu_memory_utilization = u;
  }
  // Token counts read k as 1,024 (parse_tokens); the number of sequences is a batch size, in digits.
  auto count = [](const char* flag, const std::string& text, uint64_t max, bool tokens = true) {
    const uint64_t v = tokens ? parse_tokens(flag, text, max) : parse_batch_size(flag, text, max);
    if (v == 0) throw Error(flag, "\"" + text + "\" must be at least 1");
    return v;
  };
  if (!a.max_model_len.empty()) s.max_model_len = count("--max-model-len", a.max_model_len, 1ull << 32);
  if (!a.max_num_seqs.empty()) s.max_num_seqs = count("--max-num-seqs", a.max_num_seqs, 1ull << 24, false);
  s.max_num_seqs_given = !a.max_num_seqs.empty();
  if (!a.vllm_version.empty()) s.rules = vllm_rules_from_flag(a.vllm_version);
  s.requested_version = a.vllm_version;
  s.v1 = s.rules.v1;
  if (!a.vllm_entry.empty()) {
    if (a.vllm_entry != "serve" && a.vllm_entry != "llm")
      throw Error("--vllm-entry", "\"" + a.vllm_entry +
                                      "\" is not an entry point (expected serve for `vllm serve` or llm for "
                                      "the vllm.LLM class)");
    if (!s.v1)
      throw Error("--vllm-entry",
                  "\"" + a.vllm_entry + "\" applies to the V1 engine's defaults (drop it or --vllm-version)");
    s.entry = a.vllm_entry == "llm" ? VllmEntry::llm : VllmEntry::serve;
  }
  if (!a.batched_tokens.empty())
    s.max_num_batched_tokens = count("--max-num-batched-tokens", a.batched_tokens, 1ull << 32);
  if (!a.block_size.empty()) {
    s.block_size = count("--block-size", a.block_size, 1ull << 16);
    const uint64_t b = s.block_size;
    if (b != 8 && b != 16 && b != 32 && b != 64 && b != 128)
      throw Error("--block-size", "\"" + a.block_size +
                                      "\" is not one of vLLM's block sizes (expected 8, 16, 32, 64 or 128)");
  }
  if (!a.chunked.empty()) {
    if (a.chunked != "on" && a.chunked != "off")
      throw Error("--chunked-prefill", "\"" + a.chunked + "\" is not on or off");
    s.chunked_prefill = a.chunked == "on";
  }
  return s;
}

// vllm_budget with the engine fields it names (max_model_len, ...) named as this command's flags.
VllmBudget budget(const EstimateRequest& r, uint64_t total, const VllmSettings& s) {
  try {
    return vllm_budget(r, total, s);
  } catch (const Error& e) {
    if (e.field() != Field::none) throw;
    std::string flag = "--" + e.subject();
    for (char& c : flag)
      if (c == '_') c = '-';
    throw Error(flag, e.message());
  }
}

// One engine's flags with the other engine: name the flag that engine takes instead.
void refuse_other_engine(const ServeArgs& a) {
  const std::pair<const std::string*, const char*> sglang_only[] = {
      {&a.mem_fraction,
       "--mem-fraction-static: an SGLang flag (with --engine vllm: --gpu-memory-utilization)"},
      {&a.max_total_tokens, "--max-total-tokens: an SGLang flag (add --engine sglang)"},
      {&a.chunked_prefill_size,
       "--chunked-prefill-size: an SGLang flag (with --engine vllm: --max-num-batched-tokens)"},
      {&a.context_length, "--context-length: an SGLang flag (with --engine vllm: --max-model-len)"},
      {&a.kv_cache_dtype, "--kv-cache-dtype: an SGLang flag here (with --engine vllm: --kv-format fp8)"},
      {&a.cuda_graph_max_bs, "--cuda-graph-max-bs: an SGLang flag (add --engine sglang)"},
      {&a.sglang_version, "--sglang-version: an SGLang flag (add --engine sglang)"}};
  for (const auto& [value, message] : sglang_only)
    if (!value->empty()) {
      const std::string m = message;
      const size_t colon = m.find(':');
      throw Error(m.substr(0, colon), "\"" + *value + "\" given with --engine vllm:" + m.substr(colon + 1));
    }
}

}  // namespace

void add_serve(CLI::App& sub, Runner& run) {
  auto a = std::make_shared<ServeArgs>();
  add_plan_options(sub, a->plan, PlanScope::serving);
  add_output_options(sub, a->output);
  sub.add_option("--engine", a->engine, "Serving engine: vllm (default) or sglang");
  sub.add_option("--gpu-memory-utilization", a->utilization, "Share of the GPU vLLM may use (default 0.9)");
  sub.add_option("--max-model-len", a->max_model_len,
                 "Context length per request in tokens (default: the model's; 32k = 32,768)");
  sub.add_option("--max-num-seqs", a->max_num_seqs,
                 "Sequences per step (default: V1 1024 on GPUs of 70 GiB or more but A100s, else 256)");
  sub.add_option("--max-num-batched-tokens", a->batched_tokens,
                 "Tokens per step: bounds the profiled activation peak (default: vLLM's rule)");
  sub.add_option("--block-size", a->block_size, "Tokens per KV-cache block (default 16)");
  sub.add_option("--chunked-prefill", a->chunked,
                 "Chunked prefill (V1: always on; V0: on above 32,768 tokens of context)");
  sub.add_option(
      "--gpu-memory", a->gpu_memory,
      "The GPU's total memory as torch reports it (default: the preset's, less the driver's share)");
  sub.add_option("--check-log", a->check_log,
                 "A vLLM (or SGLang) start-up log to compare with the prediction");
  sub.add_option("--vllm-version", a->vllm_version,
                 "vLLM release whose rules apply, 0.6 to 0.34 (default: the newest); v0 = 0.6.4's V0 engine");
  sub.add_option(
      "--vllm-entry", a->vllm_entry,
      "vLLM V1: serve (default: `vllm serve`) or llm (the vllm.LLM class): their step defaults differ");
  sub.add_option("--mem-fraction-static", a->mem_fraction,
                 "SGLang: share of free memory for weights and KV pool (default: SGLang's rule by GPU size)");
  sub.add_option("--max-total-tokens", a->max_total_tokens, "SGLang: a cap on the KV pool in tokens");
  sub.add_option("--chunked-prefill-size", a->chunked_prefill_size,
                 "SGLang: tokens per prefill chunk (default by GPU size; enters the default fraction)");
  sub.add_option("--context-length", a->context_length,
                 "SGLang: context length per request (default: the model's)");
  sub.add_option("--kv-cache-dtype", a->kv_cache_dtype, "SGLang: auto|fp8_e4m3|fp8_e5m2|bf16");
  sub.add_option("--sglang-version", a->sglang_version,
                 "SGLang: the release whose rules apply, X.Y[.Z] from 0.3 (default: the newest, 0.5.23)");
  sub.add_option("--cuda-graph-max-bs", a->cuda_graph_max_bs,
                 "SGLang: largest CUDA-graph batch (default by GPU size; enters the default fraction)");
  sub.add_option("--from", a->from_file,
                 "A file holding a vllm serve, sglang.launch_server or llama-server command line to plan");
  sub.add_option("--from-command", a->from_command, "The same command line given as one argument");
  run = [a, &sub](Io& io) -> int {
    if (!a->from_file.empty() || !a->from_command.empty()) return run_serve_from(sub, *a, io);
    const OutputOptions out = resolve_output_options(a->output, io);
    if (a->engine != "vllm" && a->engine != "sglang")
      throw Error("--engine",
                  "\"" + a->engine + "\" is not a serving engine memplan models (expected vllm or sglang)");
    if (a->engine == "sglang") return run_sglang(*a, io, out);
    refuse_other_engine(*a);
    RawPlan raw = a->plan;
    const bool gpus_auto = raw.given.count("gpus") && raw.given.at("gpus") == "auto";
    if (gpus_auto) raw.given.erase("gpus");
    const ServePlan served = resolve_serve_plan(raw);
    const Plan& plan = served.plan;
    if (!plan.gpu_given) throw Error("--gpu", "required: the GPU to serve on (e.g. --gpu a100-80gb)");
    if (plan.targets.gpus.size() != 1)
      throw Error("--gpu", "serve plans one GPU type at a time (got " +
                               std::to_string(plan.targets.gpus.size()) + ")");
    const GpuSpec& gpu = plan.targets.gpus[0];
    VllmSettings s = settings_from(*a);
    s.device_name = gpu.name;
    // vLLM 0.10.1 runs encoder-decoder models (mllama's cross-attention) on V0: V1 has no
    // encoder-decoder support there (arg_utils.py _is_v1_supported_oracle falls back).
    const bool encoder_decoder = plan.request.model.arch && plan.request.model.arch->cross_attention_layers;
    const bool v0_fallback = encoder_decoder && a->vllm_version.empty();
    if (v0_fallback) s.rules = vllm_v0_rules();
    if (plan.request.parallel) {
      const ParallelLayout& l = *plan.request.parallel;
      if (l.sharding != ShardingStrategy::ddp || l.offload != Offload::none)
        throw Error("--zero", "shards training state; a serving engine splits the model with --tp/--pp");
      s.tp = l.tp;
      s.pp = l.pp;
    }
    if (plan.request.overhead_given) s.non_torch_bytes = plan.request.overhead_bytes;
    uint64_t total = gpu.usable_bytes();
    if (!a->gpu_memory.empty()) total = parse_size("--gpu-memory", a->gpu_memory);
    if (total == 0) throw Error("--gpu-memory", "the GPU has no memory to plan with");

    ServeResult res;
    res.model_id = plan.request.model.id;
    const ServeModelArg model_arg =
        serve_model_arg(plan.request.model, serve_from_preset(a->plan, plan.request.model));
    res.model_arg = model_arg.arg;
    if (model_arg.note) res.notes.push_back(*model_arg.note);
    res.model_name = plan.request.model.name;
    res.gpu_id = gpu.id;
    res.gpu_name = gpu.name;
    if (gpus_auto) {
      bool found = false;
      for (uint64_t tp : k_serve_auto_tp) {
        VllmSettings t = s;
        t.tp = tp;
        try {
          res.budget = budget(plan.request, total, t);
        } catch (const Error& e) {
          if (e.field() != Field::tp) throw;
          continue;  // tp does not divide the heads: the next size
        }
        if (res.budget.fits) {
          found = true;
          res.notes.push_back("--gpus auto: the smallest tensor-parallel size that holds one " +
                              group_thousands(res.budget.settings.max_model_len) + "-token request is " +
                              std::to_string(tp) + " x " + gpu.id);
          break;
        }
      }
      if (!found) res.notes.push_back("--gpus auto: no tensor-parallel size up to 64 holds one request");
    } else {
      res.budget = budget(plan.request, total, s);
    }
    if (!a->check_log.empty()) {
      const std::string text = read_small_file(a->check_log, k_serve_log_limit, "--check-log");
      res.log_path = a->check_log;
      res.checks = check_against_log(res.budget, read_vllm_log(text));
    }
    for (const std::string& n : plan.request.model.notes) res.notes.push_back(n);
    if (!served.dtype_note.empty()) res.notes.push_back(served.dtype_note);
    if (!res.budget.non_torch_given && res.budget.non_torch.nccl_unknown)
      res.notes.push_back(
          "non-torch memory leaves out NCCL's buffers (their size depends on the topology NCCL finds); add "
          "the logged non_torch_memory with --overhead");
    if (auto n = vllm_window_note(plan.request.model, res.budget)) res.notes.push_back(*n);
    // vllm/config.py (_get_and_verify_max_len): a max_model_len above the model's derived length is a
    // ValueError at start-up unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.
    if (const std::string n = engine_context_note(
            "--max-model-len", res.budget.settings.max_model_len, res.budget.model_context,
            "vLLM refuses it at start-up unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, and the output past them is "
            "not what the model was trained to give");
        !n.empty())
      res.notes.push_back(n);
    if (v0_fallback)
      res.notes.push_back(
          "vLLM serves encoder-decoder models (cross-attention) on its V0 engine (0.10.1 falls back to it, "
          "arg_utils.py; V0 is gone from 0.11): 0.6.4's V0 rules apply (--vllm-version 0.10.1 "
          "for V1's)");
    res.notes.push_back(res.budget.settings.v1 ? vllm_v1_rules_note(res.budget)
                                               : vllm_v0_rules_note(res.budget));
    if (out.format == Format::json)
      io.out << serve_json(res, plan.inputs).dump(2) << "\n";
    else if (out.format == Format::csv)
      throw Error("--format", "serve prints table, markdown or json");
    else
      io.out << serve_table(res, out);
    bool ok = res.budget.fits;
    for (const LogCheck& c : res.checks) ok = ok && c.within();
    return ok ? k_ok : k_no_fit;
  };
}

}  // namespace memplan::cli
