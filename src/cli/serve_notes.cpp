// What the serving engines do and what memplan serve does not model, in one sentence each.
#include "cli/serve_notes.hpp"

#include <memplan/quantity.hpp>

namespace memplan::cli {
namespace {

// "13 of 26 layers attend to a window of 4,096 tokens; " (empty for a model without windows).
std::string window_layers(const ModelSpec& m) {
  if (!m.arch || m.arch->window_layers == 0 || m.arch->attention_window == 0) return "";
  const TransformerArch& a = *m.arch;
  return std::to_string(a.window_layers) + " of " + std::to_string(a.layers) + " layers attend to " +
         (a.chunked_attention ? "chunks of " : "a window of ") + group_thousands(a.attention_window) +
         " tokens; ";
}

}  // namespace

std::string vllm_v1_rules_note(const VllmBudget& b) {
  const VllmSettings& s = b.settings;
  const VllmRules& r = s.rules;
  std::string o = "vLLM " + b.version + " (V1 engine) rules";
  if (!s.requested_version.empty() && s.requested_version != b.version)
    o += " (for --vllm-version " + s.requested_version + ": the newest release memplan read at or below it)";
  o += ": KV memory = gpu_memory_utilization x total - weights - the profile run's torch peak (the larger of "
       "one layer's forward and the sampler's warm-up) - ";
  o += r.context_in_non_torch ? "the non-torch memory with the CUDA context"
                              : "the non-torch increase after start-up (the CUDA context is not subtracted)";
  o += r.cuda_graphs_before_kv ? " - the CUDA-graph estimate" : "";
  o += "; chunked prefill always; defaults block_size 16 and, for " +
       (s.entry == VllmEntry::llm ? std::string("the vllm.LLM class") : std::string("vllm serve")) +
       " on this GPU, max_num_batched_tokens " + group_thousands(s.max_num_batched_tokens) +
       " and max_num_seqs " + group_thousands(s.max_num_seqs) + " (arg_utils.py).";
  o += " Sampler: " + std::to_string(r.sampler_bytes_per_logit) + " B per request x vocab (" +
       r.sampler_rule + ").";
  o += " Not modelled: torch.compile's effect on the peak, NCCL's buffers";
  if (!r.cuda_graphs_before_kv) o += ", CUDA graphs (captured after the KV cache)";
  return o;
}

std::string vllm_v0_rules_note(const VllmBudget& b) {
  const bool context = b.settings.rules.context_in_non_torch;
  return "vLLM " + b.version +
         " (V0 engine) rules and defaults: gpu_memory_utilization 0.9, block_size 16, max_num_seqs 256, "
         "max_num_batched_tokens max(max_model_len, 2048) or 512 with chunked prefill; non-torch memory " +
         std::string(context ? "measured from an empty device (the CUDA context in it)"
                             : "is the increase after start-up (memory_profiling: no CUDA context)") +
         ". vLLM runs V1 by default from 0.8 (V0 was removed in 0.11)";
}

std::optional<std::string> vllm_window_note(const ModelSpec& m, const VllmBudget& b) {
  const std::string n = window_layers(m);
  if (n.empty()) return std::nullopt;
  if (!b.settings.v1)
    return n +
           "vLLM's V0 block table holds every layer's KV for every token, as here; V1's hybrid "
           "KV-cache manager (the default engine) gives the window layers groups of their own";
  if (b.window_layers_full && m.arch->chunked_attention)
    return n +
           "vLLM 0.10 turns its hybrid KV-cache manager off for chunked attention "
           "(VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE unset), so every layer holds every token, "
           "as here";
  if (b.window_layers_full)
    return n +
           "with pipeline stages the window layers are counted at full length here (each stage's own "
           "grouping is not modelled): fewer tokens than vLLM's";
  const VllmKvGroups& g = *b.kv_groups;
  std::string groups = std::to_string(g.full_groups) + " full and " + std::to_string(g.window_groups) +
                       " window group(s) of " + std::to_string(g.group_size) + " layers";
  if (g.padding_layers) groups += ", " + std::to_string(g.padding_layers) + " of them empty padding";
  if (!b.kv_shape.full_layers) groups = "one group of window layers";
  return n + "V1's hybrid KV-cache manager: " + groups + "; a request holds at most " +
         group_thousands(g.window_blocks_per_request) +
         " blocks in a window layer (window - 1 + max_num_batched_tokens tokens, + 1), " +
         group_thousands(g.full_blocks_per_request) + " in a full one";
}

std::optional<std::string> sglang_window_note(const ModelSpec& m) {
  const std::string n = window_layers(m);
  if (n.empty()) return std::nullopt;
  return n +
         "SGLang keeps their KV in a pool of its own (--swa-full-tokens-ratio), which is not modelled: "
         "the pool here holds every layer's KV for every token";
}

}  // namespace memplan::cli
