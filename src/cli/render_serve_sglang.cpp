// memplan serve --engine sglang's words and numbers: each row of SGLang's budget with its source,
// the pool in tokens, SGLang's own log lines as they would read, the flags, and a start-up log
// beside the prediction.
#include "cli/render_serve_sglang.hpp"

#include <cstdio>

#include <memplan/quantity.hpp>
#include "cli/number_text.hpp"
#include "cli/render_log_checks.hpp"
#include "cli/text_table.hpp"

namespace memplan::cli {
namespace {

std::string count(uint64_t v) { return group_thousands(v); }

std::string version(const SglangSettings& s) { return sglang_rules_name(s.rules); }

nlohmann::json comm_parts_json(const SglangBudget& b) {
  nlohmann::json parts = nlohmann::json::array();
  for (const SglangCommPart& p : b.comm_parts)
    parts.push_back({{"name", p.name}, {"bytes", p.bytes}, {"source", p.source}, {"assumed", p.assumed}});
  return parts;
}

}  // namespace

std::vector<LogCheck> check_against_sglang_log(const SglangBudget& b, const SglangLogFigures& log) {
  std::vector<LogCheck> c;
  if (log.free_before_gib)
    c.push_back({"free before the weights", *log.free_before_gib, gib(b.total_bytes), 0.05, "GiB"});
  if (log.weights_gib)
    c.push_back({"weights (mem usage)", *log.weights_gib, gib(b.weight_bytes), 0.01, "GiB"});
  if (log.free_after_gib)
    c.push_back({"free after the weights", *log.free_after_gib, gib(b.avail_bytes), 0.05, "GiB"});
  if (log.kv_tokens)
    c.push_back({"KV tokens (max_total_num_tokens)", static_cast<double>(*log.kv_tokens),
                 static_cast<double>(b.max_total_num_tokens), 0.05, ""});
  if (log.pool_gib) c.push_back({"KV pool (K + V size)", *log.pool_gib, gib(b.pool_bytes), 0.05, "GiB"});
  if (log.mem_fraction_static)
    c.push_back(
        {"mem_fraction_static", *log.mem_fraction_static, *b.settings.mem_fraction_static, 0.0005, ""});
  if (log.context_len)
    c.push_back({"context_len", static_cast<double>(*log.context_len),
                 static_cast<double>(b.settings.context_length), 0.0, ""});
  return c;
}

std::string sglang_flags(const SglangServeResult& r) {
  const SglangSettings& s = r.budget.settings;
  std::string f = "python -m sglang.launch_server --model-path " + r.model_arg;
  if (s.tp > 1) f += " --tp " + std::to_string(s.tp);
  if (s.pp > 1) f += " --pp " + std::to_string(s.pp);
  f += " --mem-fraction-static " + fixed(*s.mem_fraction_static, 3);
  f += " --context-length " + std::to_string(s.context_length);
  f += " --chunked-prefill-size " + std::to_string(s.chunked_prefill_size);
  if (r.budget.capped) f += " --max-total-tokens " + std::to_string(s.max_total_tokens);
  if (!r.kv_cache_dtype.empty()) f += " --kv-cache-dtype " + r.kv_cache_dtype;
  return f;
}

std::string sglang_table(const SglangServeResult& r, const OutputOptions& out) {
  const SglangBudget& b = r.budget;
  const SglangSettings& s = b.settings;
  const double fraction = *s.mem_fraction_static;
  const Units u = out.units;
  using A = TextTable::Align;
  TextTable t({{"budget (one GPU)", A::left}, {"memory", A::right}});
  t.add_row({"GPU total", format_bytes(b.gpu_total_bytes, u)});
  if (r.non_torch_default && !b.comm_parts.empty()) {
    uint64_t comm = 0;
    for (const SglangCommPart& p : b.comm_parts) comm += p.bytes;
    t.add_row({"- CUDA context", format_bytes(b.context_bytes, u)});
    t.add_row({"- NCCL and custom all-reduce (tp/pp set-up)", format_bytes(comm, u)});
  } else {
    t.add_row({"- non-torch memory (CUDA context, NCCL)", format_bytes(b.non_torch_bytes, u)});
  }
  t.add_row({"= free before the weights (total_gpu_memory)", format_bytes(b.total_bytes, u)});
  t.add_row({"- weights", format_bytes(b.weight_bytes, u)});
  t.add_row({"= free after the weights", format_bytes(b.avail_bytes, u)});
  t.add_row({"- total_gpu_memory x (1 - " + fixed(fraction, 3) + ")", format_bytes(b.margin_bytes, u)});
  t.add_row({"= KV pool", signed_bytes(b.rest_bytes, u)});

  std::string o;
  if (!out.quiet) {
    o += "memplan serve: " + r.model_name + " on " + r.gpu_name + ", SGLang " + version(s) + " budget";
    if (s.tp > 1 || s.pp > 1)
      o += ", tp " + std::to_string(s.tp) + " x pp " + std::to_string(s.pp) + " (the most-loaded GPU)";
    o += "\n\n";
  }
  o += out.format == Format::markdown ? t.render_markdown() : t.render();
  o += "\n";
  const double half = gib(b.pool_bytes) / (b.mla ? 1.0 : 2.0);
  o += "  KV Cache is allocated. #tokens: " + std::to_string(b.max_total_num_tokens) +
       (b.mla ? ", KV size: " + fixed(half, 2) + " GB\n"
              : ", K size: " + fixed(half, 2) + " GB, V size: " + fixed(half, 2) + " GB\n");
  o += "  max_total_num_tokens=" + std::to_string(b.max_total_num_tokens) +
       ", chunked_prefill_size=" + std::to_string(s.chunked_prefill_size) +
       ", context_len=" + std::to_string(s.context_length) + "\n";
  o += "  KV tokens: " + count(b.max_total_num_tokens) + " (" + count(b.cell_size) + " B per token)\n";
  o += "  maximum concurrency at " + count(s.context_length) +
       " tokens per request: " + fixed(b.max_concurrency, 2) + "x\n";
  if (!b.fits)
    o += "  does not fit: a " + count(s.context_length) +
         "-token request is longer than the pool; SGLang "
         "starts but refuses it (\"Input length (...) exceeds the maximum allowed length (" +
         std::to_string(b.max_total_num_tokens > 0 ? b.max_total_num_tokens - 1 : 0) + " tokens)\")" +
         (b.max_total_num_tokens == 0 ? " or stops with \"Not enough memory. Please try to increase "
                                        "--mem-fraction-static.\""
                                      : "") +
         "\n";
  o += "  flags: " + sglang_flags(r) + "\n";

  if (out.explain) {
    const InferenceSplit& sp = b.split;
    o += "\nexplain (SGLang " + version(s) +
         ": model_runner.py profile_max_num_token, server_args.py _handle_gpu_memory_settings):\n";
    o += "  version row: SGLang " + version(s) + ", " + s.rules.source + "\n";
    if (b.mem_fraction_default) {
      o += "  GPU bucket " + b.gpu_bucket + " (" + count(b.gpu_mem_mib) +
           " MiB, nvidia-smi's total): chunked_prefill_size " + std::to_string(s.chunked_prefill_size) +
           ", cuda_graph_max_bs " + std::to_string(s.cuda_graph_max_bs) + "\n";
      o += "  mem_fraction_static rule: " + b.fraction_rule + "\n";
      if (b.reserved_mib > 0 && s.rules.fraction == SglangFractionRule::reserve_terms) {
        o += "  reserved = 512 (metadata) + max(" + std::to_string(s.chunked_prefill_size) +
             ", 2048) x 1.5 (one prefill chunk's activations) + " + std::to_string(s.cuda_graph_max_bs) +
             " x 2 (CUDA graphs) + " + std::to_string(s.tp * s.pp) + " / 8 x 1024 (parallel size)";
        if (s.rules.piecewise_reserve && s.pp == 1)
          o += " + " + fixed(b.piecewise_mib, 1) + " (prefill CUDA graphs)";
        o += std::string(b.gpu_mem_mib > 60 * 1024 ? ", at least 10,240 above 60 GiB" : "") + " = " +
             fixed(b.reserved_mib, 1) + " MiB\n";
      } else if (b.reserved_mib > 0) {
        o += "  reserved = " + fixed(b.reserved_mib, 1) + " MiB\n";
      }
      if (b.reserved_mib > 0)
        o += "  mem_fraction_static = round((" + count(b.gpu_mem_mib) + " - " + fixed(b.reserved_mib, 1) +
             ") / " + count(b.gpu_mem_mib) + ", 3) = " + fixed(fraction, 3) + "\n";
      else
        o += "  mem_fraction_static = " + fixed(fraction, 3) + "\n";
    } else {
      o += "  mem_fraction_static = " + fixed(fraction, 3) + " (given)\n";
    }
    o += "  GPU total: " + count(b.gpu_total_bytes) +
         " B (torch's total: NVML total minus the driver's reserved share, or --gpu-memory)\n";
    o += "  non-torch memory = " + count(b.non_torch_bytes) + " B (" +
         (r.non_torch_default ? "memplan's parts below; --overhead overrides them" : "--overhead") +
         "): SGLang measures free memory after torch.distributed is up (model_runner.py "
         "init_torch_distributed, "
         "the minimum over the ranks with tp > 1), so the CUDA context, NCCL and anything outside torch are "
         "already gone from its total\n";
    if (r.non_torch_default) {
      o += "    CUDA context " + count(b.context_bytes) + " B (400 MiB with lazy loading, pytorch#109888)\n";
      for (const SglangCommPart& p : b.comm_parts)
        o += "    " + p.name + " " + count(p.bytes) + " B (" + p.source + ")" +
             (p.assumed ? " [assumed: not derivable from code; set high so the pool is not over-promised]"
                        : "") +
             "\n";
      if (!b.comm_parts.empty())
        o +=
            "    not counted: the NCCL library's kernels loaded at the warm-up (the NCCL build's), the world "
            "group's communicator (made at its first collective, after the pool)\n";
    }
    o += "  total_gpu_memory = " + count(b.gpu_total_bytes) + " - " + count(b.non_torch_bytes) + " = " +
         count(b.total_bytes) + " B (\"Load weight begin. avail mem\")\n";
    o += "  weights = parameters " + count(b.parameter_bytes) + " B on this GPU";
    if (sp.tp > 1 || sp.pp > 1)
      o += " (" + count(b.model_weight_bytes) + " B for the model, split " + std::to_string(sp.tp) +
           " ways by tp, " + count(sp.replicated_parameters) + " norm/bias parameters replicated, " +
           std::to_string(sp.layers_per_gpu) + " layers per stage)";
    o += " + rotary cos/sin cache " + count(b.rotary_bytes) + " B + allocator rounding " +
         count(b.rounding_bytes) + " B = " + count(b.weight_bytes) +
         " B (\"Load weight end. mem usage\": the drop in free memory)\n";
    o += b.rounding_derived
             ? "  allocator rounding: PyTorch's caching allocator gives each weight tensor of 10 MiB or more "
               "its own "
               "segment, rounded up to 2 MiB (kRoundLarge); the tensors are the engine's fused qkv, o, "
               "gate_up and down "
               "of each layer, the embedding and the lm_head, each cut by tp\n"
             : "  allocator rounding: not derived for this model (quantised, MoE, MLA or not 16-bit)\n";
    o += "  free after the weights = " + count(b.total_bytes) + " - " + count(b.weight_bytes) + " = " +
         count(b.avail_bytes) + " B\n";
    o += "  margin = total_gpu_memory x (1 - " + fixed(fraction, 3) + ") = " + count(b.margin_bytes) +
         " B (activations, CUDA graphs and request tables come out of it after the pool)\n";
    o += "  KV pool = free after - margin = " + (b.rest_bytes < 0 ? std::string("-") : std::string()) +
         count(static_cast<uint64_t>(b.rest_bytes < 0 ? -b.rest_bytes : b.rest_bytes)) + " B\n";
    if (b.mla)
      o += "  cell_size = (kv_lora_rank + qk_rope_head_dim) " + count(b.cell_elements) + " x " +
           std::to_string(sp.layers_per_gpu) + " layers x " + std::to_string(b.kv_element_bytes) +
           " B = " + count(b.cell_size) + " B (MLA caches one latent per token, the same on every tp rank)\n";
    else
      o += "  cell_size = " + std::to_string(sp.kv_heads_per_gpu) + " KV heads x " +
           std::to_string(b.cell_elements / 2 / sp.kv_heads_per_gpu) + " head_dim x " +
           std::to_string(sp.layers_per_gpu) + " layers x 2 (k, v) x " + std::to_string(b.kv_element_bytes) +
           " B = " + count(b.cell_size) + " B" +
           (sp.kv_replicas > 1 ? " (tp > KV heads: each KV head is replicated on " +
                                     std::to_string(sp.kv_replicas) + " GPUs)"
                               : std::string()) +
           "\n";
    o += "  max_total_num_tokens = floor(pool / cell_size) = " + count(b.profiled_tokens);
    if (b.capped) o += ", cut to --max-total-tokens: " + count(b.max_total_num_tokens);
    o += "\n";
    o += "  concurrency = " + count(b.max_total_num_tokens) + " / context_length " + count(s.context_length) +
         " = " + fixed(b.max_concurrency, 2) + "\n";
  }

  if (r.log_path) o += log_checks_text(r.checks, *r.log_path, "SGLang", out);
  if (!out.quiet)
    for (const std::string& n : r.notes) o += "  note: " + n + "\n";
  return o;
}

nlohmann::json sglang_json(const SglangServeResult& r, const nlohmann::json& inputs) {
  using nlohmann::json;
  const SglangBudget& b = r.budget;
  const SglangSettings& s = b.settings;
  return {{"schema", "memplan.serve-sglang/1"},
          {"engine", "sglang"},
          {"engine_version", version(s)},
          {"engine_rules", s.rules.label},
          {"inputs", inputs},
          {"gpu", r.gpu_id},
          {"settings",
           {{"mem_fraction_static", *s.mem_fraction_static},
            {"mem_fraction_static_default", b.mem_fraction_default},
            {"chunked_prefill_size", s.chunked_prefill_size},
            {"cuda_graph_max_bs", s.cuda_graph_max_bs},
            {"context_length", s.context_length},
            {"max_total_tokens", s.max_total_tokens ? json(s.max_total_tokens) : json(nullptr)},
            {"page_size", s.page_size},
            {"tp", s.tp},
            {"pp", s.pp}}},
          {"budget",
           {{"gpu_total_bytes", b.gpu_total_bytes},
            {"non_torch_bytes", b.non_torch_bytes},
            {"comm_parts", comm_parts_json(b)},
            {"free_before_weights_bytes", b.total_bytes},
            {"weight_bytes", b.weight_bytes},
            {"parameter_bytes", b.parameter_bytes},
            {"rotary_bytes", b.rotary_bytes},
            {"rounding_bytes", b.rounding_bytes},
            {"free_after_weights_bytes", b.avail_bytes},
            {"margin_bytes", b.margin_bytes},
            {"pool_bytes", b.rest_bytes}}},
          {"mla", b.mla},
          {"cell_size", b.cell_size},
          {"max_total_num_tokens", b.max_total_num_tokens},
          {"kv_bytes", b.pool_bytes},
          {"max_concurrency", b.max_concurrency},
          {"fits", b.fits},
          {"flags", sglang_flags(r)},
          {"log_checks", r.log_path ? log_checks_json(r.checks) : json(nullptr)},
          {"notes", r.notes}};
}

}  // namespace memplan::cli
