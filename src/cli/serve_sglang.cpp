// memplan serve --engine sglang: SGLang's KV pool on one GPU type (per GPU with --tp/--pp), the
// concurrency at --context-length and the `python -m sglang.launch_server` flags; --check-log
// compares an SGLang start-up log.
#include <memory>
#include <optional>
#include <utility>

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/base/file_reader.hpp"
#include "core/base/quantity_kinds.hpp"
#include "core/serving/sglang_budget.hpp"
#include "core/serving/sglang_log.hpp"

#include "cli/model_context.hpp"
#include "cli/render_serve_sglang.hpp"
#include "cli/serve_args.hpp"
#include "cli/serve_model_arg.hpp"
#include "cli/serve_notes.hpp"
#include "cli/serve_plan.hpp"

namespace memplan::cli {
namespace {

void refuse_vllm_flags(const ServeArgs& a) {
  const std::pair<const std::string*, const char*> vllm_only[] = {
      {&a.utilization, "--gpu-memory-utilization|--mem-fraction-static"},
      {&a.max_model_len, "--max-model-len|--context-length"},
      {&a.max_num_seqs, "--max-num-seqs|--max-running-requests (no effect on the pool)"},
      {&a.batched_tokens, "--max-num-batched-tokens|--chunked-prefill-size"},
      {&a.block_size, "--block-size|SGLang's page size 1"},
      {&a.chunked, "--chunked-prefill|--chunked-prefill-size"},
      {&a.vllm_version, "--vllm-version|--sglang-version"},
      {&a.vllm_entry, "--vllm-entry|SGLang's own launch (python -m sglang.launch_server)"}};
  for (const auto& [value, names] : vllm_only)
    if (!value->empty()) {
      const std::string n = names;
      const size_t bar = n.find('|');
      throw Error(n.substr(0, bar),
                  "\"" + *value + "\" is a vLLM flag; with --engine sglang use " + n.substr(bar + 1));
    }
}

std::string sglang_newest_version_text() { return sglang_newest_rules().label; }

SglangSettings sglang_settings_from(const ServeArgs& a) {
  SglangSettings s;
  if (!a.sglang_version.empty()) {
    const std::optional<VllmVersion> v = parse_vllm_version(a.sglang_version);
    if (!v)
      throw Error("--sglang-version", "\"" + a.sglang_version +
                                          "\" is not an SGLang release (expected X.Y or X.Y.Z, e.g. " +
                                          sglang_newest_version_text() + ")");
    const std::optional<SglangRules> rules = sglang_rules_for(*v);
    if (!rules)
      throw Error("--sglang-version", "\"" + a.sglang_version +
                                          "\" is older than the releases memplan models (0.3.0 to " +
                                          sglang_newest_version_text() + ")");
    s.rules = *rules;
  }
  if (!a.mem_fraction.empty()) {
    const double f = parse_real("--mem-fraction-static", a.mem_fraction);
    if (!(f > 0.0 && f < 1.0))
      throw Error("--mem-fraction-static",
                  "\"" + a.mem_fraction + "\" is not in (0, 1) (expected e.g. 0.88)");
    s.mem_fraction_static = f;
  }
  // Token counts read k as 1,024 (parse_tokens); the CUDA-graph batch is a batch size, in digits.
  auto count = [](const char* flag, const std::string& text, uint64_t max, bool tokens = true) {
    const uint64_t v = tokens ? parse_tokens(flag, text, max) : parse_batch_size(flag, text, max);
    if (v == 0) throw Error(flag, "\"" + text + "\" must be at least 1");
    return v;
  };
  if (!a.max_total_tokens.empty())
    s.max_total_tokens = count("--max-total-tokens", a.max_total_tokens, 1ull << 40);
  if (!a.chunked_prefill_size.empty())
    s.chunked_prefill_size = count("--chunked-prefill-size", a.chunked_prefill_size, 1ull << 32);
  if (!a.context_length.empty()) s.context_length = count("--context-length", a.context_length, 1ull << 32);
  if (!a.cuda_graph_max_bs.empty())
    s.cuda_graph_max_bs = count("--cuda-graph-max-bs", a.cuda_graph_max_bs, 1ull << 16, false);
  return s;
}

// SGLang's --kv-cache-dtype as memplan's storage format ("" = auto, the model's dtype).
std::string sglang_kv_format(const std::string& dtype) {
  if (dtype.empty() || dtype == "auto") return "";
  if (dtype == "fp8_e4m3") return "fp8-e4m3";
  if (dtype == "fp8_e5m2") return "fp8-e5m2";
  if (dtype == "bf16" || dtype == "bfloat16") return "bf16";
  throw Error("--kv-cache-dtype",
              "\"" + dtype + "\" is not one of SGLang's (expected auto, fp8_e4m3, fp8_e5m2 or bf16)");
}

SglangBudget sglang_budget_named(const EstimateRequest& r, uint64_t total, uint64_t mib,
                                 const SglangSettings& s) {
  try {
    return sglang_budget(r, total, mib, s);
  } catch (const Error& e) {
    if (e.field() != Field::none) throw;
    std::string flag = "--" + e.subject();
    for (char& c : flag)
      if (c == '_') c = '-';
    throw Error(flag, e.message());
  }
}

}  // namespace

ExitCode run_sglang(const ServeArgs& a, Io& io, const OutputOptions& out) {
  refuse_vllm_flags(a);
  RawPlan raw = a.plan;
  const bool gpus_auto = raw.given.count("gpus") && raw.given.at("gpus") == "auto";
  if (gpus_auto) raw.given.erase("gpus");
  const std::string kv = sglang_kv_format(a.kv_cache_dtype);
  if (!kv.empty()) {
    if (raw.given.count("kv_format"))
      throw Error("--kv-cache-dtype",
                  "\"" + a.kv_cache_dtype + "\" given with --kv-format: give one of them");
    raw.given["kv_format"] = kv;
  }
  const ServePlan served = resolve_serve_plan(raw);
  const Plan& plan = served.plan;
  if (!plan.gpu_given) throw Error("--gpu", "required: the GPU to serve on (e.g. --gpu h100-80gb)");
  if (plan.targets.gpus.size() != 1)
    throw Error("--gpu",
                "serve plans one GPU type at a time (got " + std::to_string(plan.targets.gpus.size()) + ")");
  const GpuSpec& gpu = plan.targets.gpus[0];
  SglangSettings s = sglang_settings_from(a);
  s.nvlink = sglang_gpu_nvlink(gpu.id, gpu.name);
  if (plan.request.overhead_given) s.non_torch_bytes = plan.request.overhead_bytes;
  if (plan.request.parallel) {
    const ParallelLayout& l = *plan.request.parallel;
    if (l.sharding != ShardingStrategy::ddp || l.offload != Offload::none)
      throw Error("--zero", "shards training state; a serving engine splits the model with --tp/--pp");
    s.tp = l.tp;
    s.pp = l.pp;
  }
  uint64_t total = gpu.usable_bytes();
  if (!a.gpu_memory.empty()) total = parse_size("--gpu-memory", a.gpu_memory);
  if (total == 0) throw Error("--gpu-memory", "the GPU has no memory to plan with");
  // SGLang's rule reads nvidia-smi's total in MiB; a GPU given by size alone has only that size.
  const uint64_t mib = (gpu.memory_total_bytes ? gpu.memory_total_bytes : total) >> 20;

  SglangServeResult res;
  res.model_id = plan.request.model.id;
  const ServeModelArg model_arg =
      serve_model_arg(plan.request.model, serve_from_preset(a.plan, plan.request.model));
  res.model_arg = model_arg.arg;
  if (model_arg.note) res.notes.push_back(*model_arg.note);
  res.model_name = plan.request.model.name;
  res.gpu_id = gpu.id;
  res.gpu_name = gpu.name;
  res.kv_cache_dtype = kv.empty() ? "" : a.kv_cache_dtype;
  res.non_torch_default = !s.non_torch_bytes;
  if (gpus_auto) {
    bool found = false;
    for (uint64_t tp : k_serve_auto_tp) {
      SglangSettings t = s;
      t.tp = tp;
      try {
        res.budget = sglang_budget_named(plan.request, total, mib, t);
      } catch (const Error& e) {
        if (e.field() != Field::tp) throw;
        continue;  // tp does not divide the heads: the next size
      }
      if (res.budget.fits) {
        found = true;
        res.notes.push_back("--gpus auto: the smallest tensor-parallel size whose pool holds one " +
                            group_thousands(res.budget.settings.context_length) + "-token request is " +
                            std::to_string(tp) + " x " + gpu.id);
        break;
      }
    }
    if (!found) res.notes.push_back("--gpus auto: no tensor-parallel size up to 64 holds one request");
  } else {
    res.budget = sglang_budget_named(plan.request, total, mib, s);
  }
  if (!a.check_log.empty()) {
    const std::string text = read_small_file(a.check_log, k_serve_log_limit, "--check-log");
    res.log_path = a.check_log;
    res.checks = check_against_sglang_log(res.budget, read_sglang_log(text));
  }
  for (const std::string& n : plan.request.model.notes) res.notes.push_back(n);
  if (!served.dtype_note.empty()) res.notes.push_back(served.dtype_note);
  if (res.non_torch_default)
    res.notes.push_back(
        std::string("non-torch memory is the CUDA context (400 MiB with lazy loading, pytorch#109888)") +
        (res.budget.comm_parts.empty()
             ? ""
             : " and the tp/pp set-up's NCCL buffers and custom all-reduce, whose NCCL channel count is "
               "assumed high (--explain)") +
        ". SGLang's log prints the free memory it leaves (\"Load weight begin. avail mem\"); --overhead to "
        "set it");
  if (auto n = sglang_window_note(plan.request.model)) res.notes.push_back(*n);
  // sglang/srt/configs/model_config.py: a context_length above the derived one is a ValueError
  // unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1.
  if (const std::string n = engine_context_note(
          "--context-length", res.budget.settings.context_length, res.budget.model_context,
          "SGLang refuses it at start-up unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1, and the output "
          "past them is not what the model was trained to give");
      !n.empty())
    res.notes.push_back(n);
  res.notes.push_back(
      "SGLang " + sglang_rules_name(s.rules) +
      ": page_size 1; sliding-window and hybrid (mamba) pools, speculative decoding, DP attention "
      "and the multimodal adjustment of mem_fraction_static are not modelled");

  if (out.format == Format::json)
    io.out << sglang_json(res, plan.inputs).dump(2) << "\n";
  else if (out.format == Format::csv)
    throw Error("--format", "serve prints table, markdown or json");
  else
    io.out << sglang_table(res, out);
  bool ok = res.budget.fits;
  for (const LogCheck& c : res.checks) ok = ok && c.within();
  return ok ? k_ok : k_no_fit;
}

}  // namespace memplan::cli
