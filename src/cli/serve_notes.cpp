// What the serving engines do that memplan serve does not model, in one sentence each.
#include "cli/serve_notes.hpp"

#include <memplan/quantity.hpp>

namespace memplan::cli {

std::string vllm_v1_note() {
  return "the V1 engine (vLLM's default from 0.8) is not modelled: its profile run goes through "
         "torch.compile, and the CUDA graphs it captures after the KV cache come out of the "
         "1 - gpu_memory_utilization margin (\"Graph capturing finished ... took X GiB\"); later "
         "releases estimate the graph pool before the KV budget. --check-log reads V1's "
         "\"Available KV cache memory\" and \"GPU KV cache size\" lines";
}

std::string vllm_v1_rules_note() {
  return "vLLM 0.10.1 (V1 engine) rules: KV memory = gpu_memory_utilization x total - weights - the "
         "profile run's torch peak - the non-torch increase after start-up (the CUDA context is not "
         "subtracted); chunked prefill always; defaults block_size 16, max_num_batched_tokens 8192 and "
         "max_num_seqs 1024 on GPUs of 70 GiB or more, else 2048 and 256. Not modelled: torch.compile's "
         "effect on the peak, the sampler's logits in the profile run, CUDA graphs (captured after the KV "
         "cache), and hybrid pools for sliding-window layers";
}

std::optional<std::string> sliding_window_note(const ModelSpec& m, const std::string& engine) {
  if (!m.arch || m.arch->window_layers == 0 || m.arch->attention_window == 0) return std::nullopt;
  const TransformerArch& a = *m.arch;
  std::string n = std::to_string(a.window_layers) + " of " + std::to_string(a.layers) + " layers attend to " +
                  (a.chunked_attention ? "chunks of " : "a window of ") +
                  group_thousands(a.attention_window) + " tokens; ";
  if (engine == "sglang")
    return n +
           "SGLang keeps their KV in a pool of its own (--swa-full-tokens-ratio), which is not modelled: "
           "the pool here holds every layer's KV for every token";
  return n +
         "vLLM 0.6.4's V0 block table holds every layer's KV for every token, as here; V1's hybrid "
         "KV-cache manager gives the window layers smaller groups of their own (not modelled)";
}

}  // namespace memplan::cli
