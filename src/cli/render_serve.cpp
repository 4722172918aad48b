// memplan serve's words and numbers: each row of the budget with its source, the block count,
// vLLM's own log lines as they would read, the flags, and a start-up log beside the prediction.
#include "cli/render_serve.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <memplan/quantity.hpp>
#include "cli/number_text.hpp"
#include "cli/render_log_checks.hpp"
#include "cli/text_table.hpp"

namespace memplan::cli {
namespace {

nlohmann::json non_torch_parts_json(const VllmNonTorch& n) {
  nlohmann::json parts = nlohmann::json::array();
  for (const NonTorchPart& p : n.parts)
    parts.push_back({{"name", p.name}, {"bytes", p.bytes}, {"source", p.source}});
  return parts;
}

// V1's KV-cache groups (null for V0).
nlohmann::json kv_groups_json(const VllmBudget& b) {
  if (!b.kv_groups) return nullptr;
  const VllmKvGroups& g = *b.kv_groups;
  return {{"full_layers", b.kv_shape.full_layers},
          {"window_layers", b.kv_shape.window_layers},
          {"window", b.kv_shape.window},
          {"page_bytes", b.kv_shape.page_bytes},
          {"layers_per_group", g.group_size},
          {"full_groups", g.full_groups},
          {"window_groups", g.window_groups},
          {"padding_layers", g.padding_layers},
          {"full_blocks_per_request", g.full_blocks_per_request},
          {"window_blocks_per_request", g.window_blocks_per_request},
          {"blocks_per_request", g.blocks_per_request},
          {"needed_bytes", g.needed_bytes}};
}

}  // namespace

std::string vllm_refusal_text(const VllmBudget& b) {
  const VllmSettings& s = b.settings;
  VllmRefusal r;
  r.max_model_len = s.max_model_len;
  if (s.v1) {
    r.no_memory = b.kv_bytes <= 0;
    const uint64_t kv = b.kv_bytes > 0 ? static_cast<uint64_t>(b.kv_bytes) : 0;
    r.needed_gib = gib(b.kv_groups ? b.kv_groups->needed_bytes : 0);
    r.available_gib = gib(kv);
    // estimate_max_model_len: a binary search over 1 .. max_model_len (0 when nothing fits).
    r.estimated_len = std::min(b.largest_model_len, s.max_model_len);
  } else {
    r.no_memory = b.gpu_blocks == 0;  // raise_if_cache_size_invalid
    r.kv_tokens = b.kv_tokens;
  }
  return vllm_start_refusal(s.rules, r);
}

std::vector<LogCheck> check_against_log(const VllmBudget& b, const VllmLogFigures& log) {
  std::vector<LogCheck> c;
  if (log.total_gib) c.push_back({"GPU total (input)", *log.total_gib, gib(b.total_bytes), 0.01, "GiB"});
  if (log.weights_gib) c.push_back({"weights", *log.weights_gib, gib(b.weight_bytes), 0.01, "GiB"});
  // A few hundred MiB against a GiB-sized budget: 15%; the blocks it leaves stay within 5%.
  if (log.non_torch_gib)
    c.push_back({"non-torch memory", *log.non_torch_gib, gib(b.non_torch_bytes), 0.15, "GiB"});
  if (log.requested_gib)
    c.push_back({"requested (utilization x total)", *log.requested_gib, gib(b.usable_bytes), 0.01, "GiB"});
  if (log.kv_gib) {
    const double kv = static_cast<double>(b.kv_bytes) / static_cast<double>(1ull << 30);  // signed
    c.push_back({"KV cache memory", *log.kv_gib, *log.kv_gib < 0 ? kv : std::max(kv, 0.0), 0.05, "GiB"});
  }
  if (log.gpu_blocks)
    c.push_back(
        {"GPU blocks", static_cast<double>(*log.gpu_blocks), static_cast<double>(b.gpu_blocks), 0.05, ""});
  if (log.kv_tokens)
    c.push_back(
        {"KV cache tokens", static_cast<double>(*log.kv_tokens), static_cast<double>(b.kv_tokens), 0.05, ""});
  if (log.max_concurrency && log.concurrency_tokens && *log.concurrency_tokens) {
    const double predicted = static_cast<double>(b.kv_tokens) / static_cast<double>(*log.concurrency_tokens);
    c.push_back({"max concurrency at " + group_thousands(*log.concurrency_tokens) + " tokens",
                 *log.max_concurrency, predicted, 0.05, "x"});
  }
  return c;
}

std::string vllm_flags(const ServeResult& r) {
  const VllmSettings& s = r.budget.settings;
  std::string f = "vllm serve " + r.model_arg;
  if (s.tp > 1) f += " --tensor-parallel-size " + std::to_string(s.tp);
  if (s.pp > 1) f += " --pipeline-parallel-size " + std::to_string(s.pp);
  f += " --gpu-memory-utilization " + fixed(s.gpu_memory_utilization, 2);
  f += " --max-model-len " + std::to_string(s.max_model_len);
  f += " --max-num-seqs " + std::to_string(s.max_num_seqs);
  f += " --max-num-batched-tokens " + std::to_string(s.max_num_batched_tokens);
  f += " --block-size " + std::to_string(s.block_size);
  if (r.budget.chunked_prefill) f += " --enable-chunked-prefill";
  if (r.budget.kv_element_bytes == 1) f += " --kv-cache-dtype fp8";
  return f;
}

std::string serve_table(const ServeResult& r, const OutputOptions& out) {
  const VllmBudget& b = r.budget;
  const VllmSettings& s = b.settings;
  const Units u = out.units;
  using A = TextTable::Align;
  TextTable t({{"budget (one GPU)", A::left}, {"memory", A::right}});
  t.add_row({"GPU total", format_bytes(b.total_bytes, u)});
  t.add_row(
      {"x gpu_memory_utilization " + fixed(s.gpu_memory_utilization, 2), format_bytes(b.usable_bytes, u)});
  t.add_row({"- weights", format_bytes(b.weight_bytes, u)});
  t.add_row({"- activation peak (" +
                 (b.sampler_peak ? "the sampler over " + group_thousands(b.sampler_requests) + " requests"
                                 : group_thousands(b.profile_tokens) + " tokens") +
                 ")",
             format_bytes(b.activation_bytes, u)});
  t.add_row({std::string("- non-torch memory (") +
                 (b.non_torch_given              ? "given"
                  : s.rules.context_in_non_torch ? "CUDA context"
                                                 : "increase after start-up") +
                 (s.tp > 1 && !b.non_torch_given ? ", NCCL not predicted" : "") + ")",
             format_bytes(b.non_torch_bytes, u)});
  if (b.allreduce_bytes) t.add_row({"- custom all-reduce buffers", format_bytes(b.allreduce_bytes, u)});
  t.add_row({std::string("- CUDA graphs") +
                 (s.rules.cuda_graphs_before_kv ? " (estimate)" : " (after the KV cache)"),
             format_bytes(b.cuda_graph_bytes, u)});
  t.add_row({"= KV cache", signed_bytes(b.kv_bytes, u)});

  std::string o;
  if (!out.quiet) {
    o += "memplan serve: " + r.model_name + " on " + r.gpu_name + ", vLLM " + b.version +
         (s.v1 ? " (V1 engine) budget" : " (V0 engine) budget");
    if (!s.requested_version.empty() && s.requested_version != b.version && s.requested_version != "v0" &&
        s.requested_version != "v1")
      o += " (the rules read for " + s.requested_version + ")";
    if (s.tp > 1 || s.pp > 1)
      o += ", tp " + std::to_string(s.tp) + " x pp " + std::to_string(s.pp) + " (the most-loaded GPU)";
    o += "\n\n";
  }
  o += out.format == Format::markdown ? t.render_markdown() : t.render();
  o += "\n";
  o += "  # GPU blocks: " + std::to_string(b.gpu_blocks) + " (" + std::to_string(s.block_size) + " tokens, " +
       format_bytes(b.block_bytes, Units::gib) + " each" +
       (b.kv_groups && b.kv_groups->full_groups + b.kv_groups->window_groups > 1
            ? ", shared by " + std::to_string(b.kv_groups->full_groups + b.kv_groups->window_groups) +
                  " groups of " + std::to_string(b.kv_groups->group_size) + " layers"
            : std::string()) +
       ")\n";
  o += "  GPU KV cache size: " + group_thousands(b.kv_tokens) + " tokens\n";
  o += "  Maximum concurrency for " + group_thousands(s.max_model_len) +
       " tokens per request: " + fixed(b.max_concurrency, 2) + "x\n";
  if (const auto& c = b.cross)
    o += "  requests with their images: " + group_thousands(c->requests) + " (each " +
         group_thousands(c->decoder_blocks) + " blocks of text + " + std::to_string(c->images) +
         " image(s) x " + std::to_string(c->tiles_per_image) + " tiles x " +
         group_thousands(c->tokens_per_tile) + " = " + group_thousands(c->encoder_tokens) +
         " encoder tokens in " + group_thousands(c->encoder_blocks) +
         " cross-attention blocks from the same pool: block_manager.py can_allocate)\n";
  o += "  largest max_model_len that fits: " + group_thousands(b.largest_model_len) + " tokens";
  if (b.model_context && b.largest_model_len > b.model_context)
    o += " (the model was trained for " + group_thousands(b.model_context) + ")";
  o += "\n";
  if (!b.fits) o += "  does not fit: vLLM would stop with \"" + vllm_refusal_text(b) + "\"\n";
  o += "  flags: " + vllm_flags(r) + "\n";

  if (out.explain) o += serve_explain(r);

  if (r.log_path) o += log_checks_text(r.checks, *r.log_path, "vLLM", out);
  if (!out.quiet)
    for (const std::string& n : r.notes) o += "  note: " + n + "\n";
  return o;
}

nlohmann::json serve_json(const ServeResult& r, const nlohmann::json& inputs) {
  using nlohmann::json;
  const VllmBudget& b = r.budget;
  const VllmSettings& s = b.settings;
  return {{"schema", "memplan.serve/1"},
          {"engine", "vllm"},
          {"engine_version", b.version},
          {"rules",
           {{"since", std::to_string(s.rules.since.major) + "." + std::to_string(s.rules.since.minor) + "." +
                          std::to_string(s.rules.since.patch)},
            {"read_in", s.rules.label},
            {"source", s.rules.source},
            {"context_in_non_torch", s.rules.context_in_non_torch},
            {"comm_in_non_torch", s.rules.comm_in_non_torch},
            {"sampler_bytes_per_logit", s.rules.sampler_bytes_per_logit},
            {"cuda_graphs_before_kv", s.rules.cuda_graphs_before_kv}}},
          {"inputs", inputs},
          {"gpu", r.gpu_id},
          {"settings",
           {{"gpu_memory_utilization", s.gpu_memory_utilization},
            {"block_size", s.block_size},
            {"max_num_seqs", s.max_num_seqs},
            {"max_model_len", s.max_model_len},
            {"max_num_batched_tokens", s.max_num_batched_tokens},
            {"chunked_prefill", b.chunked_prefill},
            {"tp", s.tp},
            {"pp", s.pp}}},
          {"budget",
           {{"total_bytes", b.total_bytes},
            {"usable_bytes", b.usable_bytes},
            {"weight_bytes", b.weight_bytes},
            {"activation_bytes", b.activation_bytes},
            {"forward_activation_bytes", b.forward_activation_bytes},
            {"sampler_requests", b.sampler_requests},
            {"sampler_bytes", b.sampler_bytes},
            {"non_torch_bytes", b.non_torch_bytes},
            {"non_torch_given", b.non_torch_given},
            {"non_torch_parts", non_torch_parts_json(b.non_torch)},
            {"allreduce_bytes", b.allreduce_bytes},
            {"cuda_graph_bytes", b.cuda_graph_bytes},
            {"kv_bytes", b.kv_bytes}}},
          {"kv_heads_per_gpu", b.split.kv_heads_per_gpu},
          {"block_bytes", b.block_bytes},
          {"gpu_blocks", b.gpu_blocks},
          {"kv_tokens", b.kv_tokens},
          {"max_concurrency", b.max_concurrency},
          {"largest_max_model_len", b.largest_model_len},
          {"fits", b.fits},
          {"refusal", b.fits ? json(nullptr) : json(vllm_refusal_text(b))},
          {"kv_groups", kv_groups_json(b)},
          {"cross_attention", b.cross ? json{{"encoder_tokens", b.cross->encoder_tokens},
                                             {"encoder_blocks", b.cross->encoder_blocks},
                                             {"decoder_blocks", b.cross->decoder_blocks},
                                             {"requests", b.cross->requests}}
                                      : json(nullptr)},
          {"flags", vllm_flags(r)},
          {"log_checks", r.log_path ? log_checks_json(r.checks) : json(nullptr)},
          {"notes", r.notes}};
}

}  // namespace memplan::cli
