// memplan serve --explain: every term of vLLM's budget with its arithmetic, and how the KV
// memory becomes blocks (V0's one block table, or V1's groups: vllm_kv_groups.hpp).
#include "cli/render_serve.hpp"

#include <cstdio>

#include <memplan/quantity.hpp>
#include "cli/number_text.hpp"

namespace memplan::cli {
namespace {

std::string n(uint64_t v) { return group_thousands(v); }

// The page (one block of one layer) and what it is made of.
std::string page_explain(const VllmBudget& b, uint64_t layers) {
  const InferenceSplit& sp = b.split;
  std::string o = std::to_string(b.settings.block_size) + " tokens x 2 (k, v) x " + std::to_string(layers) +
                  " layer(s) x " + std::to_string(sp.kv_heads_per_gpu) + " KV heads x " +
                  std::to_string(b.head_dim) + " head_dim x " + std::to_string(b.kv_element_bytes) + " B";
  if (sp.kv_replicas > 1)
    o += " (tp " + std::to_string(sp.tp) + " > KV heads: each KV head is replicated on " +
         std::to_string(sp.kv_replicas) + " GPUs)";
  return o;
}

std::string kv_blocks_explain(const VllmBudget& b) {
  const VllmSettings& s = b.settings;
  const uint64_t kv = b.kv_bytes > 0 ? static_cast<uint64_t>(b.kv_bytes) : 0;
  std::string o;
  if (!b.kv_groups) {
    o += "  block = " + page_explain(b, b.split.layers_per_gpu) + " = " + n(b.block_bytes) + " B\n";
    o += "  GPU blocks = floor(" + n(kv) + " / " + n(b.block_bytes) + ") = " + std::to_string(b.gpu_blocks) +
         "; tokens = blocks x " + std::to_string(s.block_size) + " = " + n(b.kv_tokens) +
         "; concurrency = tokens / " + n(s.max_model_len) + "\n";
    return o;
  }
  const VllmKvGroups& g = *b.kv_groups;
  const VllmKvShape& k = b.kv_shape;
  const uint64_t groups = g.full_groups + g.window_groups;
  o += "  page = " + page_explain(b, 1) + " = " + n(k.page_bytes) + " B (one block of one layer; " +
       "vllm/v1/core/kv_cache_utils.py)\n";
  if (groups == 1) {
    o += "  one group of all " + std::to_string(g.group_size) + " layers" +
         (k.window_layers ? " (every layer slides: a window of " + n(k.window) + " tokens)" : std::string()) +
         ": GPU blocks = floor(" + n(kv) + " / " + n(k.page_bytes) + " / " + std::to_string(g.group_size) +
         ") = " + n(g.num_blocks) + "; tokens = blocks x " + std::to_string(s.block_size) + " = " +
         n(b.kv_tokens) + "\n";
  } else {
    o += "  " + std::to_string(k.full_layers) + " full and " + std::to_string(k.window_layers) +
         " window layers (" + n(k.window) + " tokens) in groups of min(" + std::to_string(k.full_layers) +
         ", " + std::to_string(k.window_layers) + ") = " + std::to_string(g.group_size) +
         " layers: " + std::to_string(g.full_groups) + " full + " + std::to_string(g.window_groups) +
         " window = " + std::to_string(groups) + " groups" +
         (g.padding_layers ? " (" + std::to_string(g.padding_layers) + " padding layers)" : std::string()) +
         "\n";
    o += "  GPU blocks = floor(" + n(kv) + " / " + n(k.page_bytes) + " / " + std::to_string(g.group_size) +
         ") = " + n(g.num_blocks) + " (each of the " + std::to_string(g.group_size) +
         " pools is shared by one layer of every group); logged tokens = floor(blocks / " +
         std::to_string(groups) + ") x " + std::to_string(s.block_size) + " = " + n(b.kv_tokens) + "\n";
  }
  o += "  one request of " + n(s.max_model_len) + " tokens: ";
  if (g.full_groups)
    o += std::to_string(g.full_groups) + " full group(s) x ceil(" + n(s.max_model_len) + " / " +
         std::to_string(s.block_size) + ") = " + n(g.full_blocks_per_request) + " blocks";
  if (g.full_groups && g.window_groups) o += " + ";
  if (g.window_groups)
    o += std::to_string(g.window_groups) + " window group(s) x (ceil(min(" + n(k.window) + " - 1 + " +
         n(k.max_num_batched_tokens) + ", " + n(s.max_model_len) + ") / " + std::to_string(s.block_size) +
         ") + 1) = " + n(g.window_blocks_per_request) + " blocks";
  if (g.full_groups && g.window_groups) o += " = " + n(g.blocks_per_request) + " blocks";
  o += "; concurrency = " + n(g.num_blocks) + " / " + n(g.blocks_per_request) + " = " +
       fixed(g.max_concurrency, 2) + "\n";
  o += "  start check: the request's pages in every layer = " + n(g.needed_bytes) + " B" +
       (g.needed_bytes <= kv ? " <= " : " > ") + "KV memory (check_enough_kv_cache_memory)\n";
  return o;
}

}  // namespace

std::string serve_explain(const ServeResult& r) {
  const VllmBudget& b = r.budget;
  const VllmSettings& s = b.settings;
  std::string o;
  const InferenceSplit& sp = b.split;
  o += "\nexplain (vLLM " + b.version +
       (s.v1 ? ", vllm/v1/worker/gpu_worker.py determine_available_memory):\n"
             : ", vllm/worker/worker.py determine_num_available_blocks):\n");
  o += "  rules: vLLM " + std::to_string(s.rules.since.major) + "." + std::to_string(s.rules.since.minor) +
       " and later, read in the " + s.rules.label + " source (" + s.rules.source + "; vllm_versions.hpp)" +
       (s.requested_version.empty() ? std::string(", the default (the newest release read)")
                                    : ", for --vllm-version " + s.requested_version) +
       "\n";
  o += "  GPU total: " + group_thousands(b.total_bytes) +
       " B (torch.cuda.mem_get_info's total: NVML total minus the driver's reserved share)\n";
  o += "  usable = " + group_thousands(b.total_bytes) + " x " + fixed(s.gpu_memory_utilization, 2) + " = " +
       group_thousands(b.usable_bytes) + " B\n";
  o += "  weights = " + group_thousands(b.parameter_bytes) + " B of parameters on this GPU";
  if (sp.tp > 1 || sp.pp > 1)
    o += " (" + group_thousands(b.model_weight_bytes) + " B x " + group_thousands(sp.parameters_per_gpu) +
         " / the model's parameters: attention, MLP, embedding and lm_head split " + std::to_string(sp.tp) +
         " ways, " + group_thousands(sp.replicated_parameters) + " norm/bias parameters replicated, " +
         std::to_string(sp.layers_per_gpu) + " layers per stage)";
  o += " + rotary cos/sin cache " + group_thousands(b.rotary_positions) + " positions x " +
       std::to_string(b.head_dim) + " head_dim x " + std::to_string(b.activation_element_bytes) +
       " B = " + group_thousands(b.rotary_cache_bytes) + " B\n";
  o += std::string(b.sampler_requests ? "  forward peak = " : "  activation peak = ") +
       group_thousands(b.profile_tokens) + " tokens (max_num_batched_tokens" +
       std::string(b.chunked_prefill ? ", chunked prefill" : ", the whole prompt in one step") + ") x " +
       group_thousands(b.activation_per_token) +
       " elements (3 x hidden: layer input, residual, attention output; + " +
       "the MLP's gate_up and activation outputs of one layer, per GPU) x " +
       std::to_string(b.activation_element_bytes) + " B = " + group_thousands(b.forward_activation_bytes) +
       " B (the forward)\n";
  if (b.sampler_requests)
    o += "  sampler warm-up = " + group_thousands(b.sampler_requests) +
         " requests (min(max_num_seqs, max_num_batched_tokens)) x " + group_thousands(b.vocab) + " vocab x " +
         std::to_string(s.rules.sampler_bytes_per_logit) + " B (" + s.rules.sampler_rule +
         ") = " + group_thousands(b.sampler_bytes) + " B, + the hidden states " +
         group_thousands(b.sampler_hidden_bytes) +
         " B; activation peak = the larger = " + group_thousands(b.activation_bytes) + " B (" +
         (b.sampler_peak ? "the sampler" : "the forward") + ")\n";
  o += "  non-torch memory = " + group_thousands(b.non_torch_bytes) + " B" +
       (b.non_torch_given ? " (given with --overhead; the predicted parts follow)" : "") + ": vLLM " +
       b.version +
       (s.rules.context_in_non_torch
            ? " measures the device's used memory minus torch's allocated bytes after the profile run (the "
              "CUDA "
              "context included)\n"
            : " subtracts only the non-torch memory that grew after the start-up snapshot (the CUDA context "
              "is before it)\n");
  if (s.rules.context_in_non_torch)  // else the snapshot is taken after the context
    for (const NonTorchPart& p : b.non_torch.parts)
      o += "    " + p.name + " = " + group_thousands(p.bytes) + " B (" + p.source + ")\n";
  if (b.allreduce_before_snapshot)
    o += "  custom all-reduce buffers (" + group_thousands(b.non_torch.allreduce_bytes) +
         " B at 0.10's sizes) are made before the start-up snapshot from 0.11: not subtracted\n";
  if (s.rules.cuda_graphs_before_kv)
    o += "  CUDA graphs = " + group_thousands(b.cuda_graph_bytes) + " B, estimated before the KV cache " +
         "(gpu_model_runner.py profile_cudagraph_memory): the largest capture, " +
         group_thousands(b.cuda_graph_largest) + " tokens x " + group_thousands(b.activation_per_token) +
         " elements x " + std::to_string(b.activation_element_bytes) +
         " B in 2 MiB segments, + 1 MiB (its floor) "
         "for each further graph, " +
         std::to_string(b.cuda_graph_sizes) + " sizes x 2 modes (FULL, PIECEWISE)\n";
  else
    o += std::string("  CUDA graphs = 0 B here: captured after the KV cache is allocated (") +
         (s.v1 ? "gpu_worker.py compile_or_warm_up_model" : "worker.py _warm_up_model") +
         "), from the margin\n";
  o += "  KV memory = usable - weights - activation peak - non-torch" +
       std::string(b.allreduce_bytes ? " - all-reduce buffers" : "") +
       std::string(b.cuda_graph_bytes ? " - CUDA graphs" : "") + " = " + (b.kv_bytes < 0 ? "-" : "") +
       group_thousands(static_cast<uint64_t>(b.kv_bytes < 0 ? -b.kv_bytes : b.kv_bytes)) + " B\n";
  o += kv_blocks_explain(b);
  o += "  max_num_batched_tokens: " +
       std::string(
           s.v1 ? "V1's default for the entry point and GPU (arg_utils.py _set_default_args_v1: "
                  "8,192 for vllm serve, 16,384 for vllm.LLM on GPUs of 70 GiB or more that are "
                  "not A100s, else 2,048 and 8,192" +
                      std::string(s.rules.tier_160gib ? "; 16,384 for both on GPUs of 160 GiB or more" : "") +
                      "); chunked prefill always\n"
           : b.chunked_prefill
               ? "512 with chunked prefill (SchedulerConfig); chunked prefill is on by default above "
                 "32,768 tokens of context\n"
               : "max(max_model_len, 2048) without chunked prefill (SchedulerConfig); chunked prefill "
                 "is on by default above 32,768 tokens of context\n");
  return o;
}

}  // namespace memplan::cli
