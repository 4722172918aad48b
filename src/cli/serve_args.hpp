#pragma once
// memplan serve's parsed flags, shared by the vLLM path (cmd_serve.cpp) and the SGLang path
// (serve_sglang.cpp).
#include <cstdint>
#include <string>

#include "cli/command.hpp"
#include "cli/plan_options.hpp"

namespace memplan::cli {

inline constexpr uint64_t k_serve_log_limit = 64ull
                                              << 20;  // a start-up log is kilobytes; a long run's, megabytes

// The tensor-parallel sizes --gpus auto tries: powers of two up to 64.
inline constexpr uint64_t k_serve_auto_tp[] = {1, 2, 4, 8, 16, 32, 64};

struct ServeArgs {
  RawPlan plan;
  RawOutputOptions output;
  std::string engine = "vllm";
  std::string utilization, max_model_len, max_num_seqs, batched_tokens, block_size, chunked, gpu_memory,
      check_log;
  // SGLang's flags
  std::string mem_fraction, max_total_tokens, chunked_prefill_size, context_length, kv_cache_dtype,
      cuda_graph_max_bs, sglang_version;
  std::string vllm_version;             // vLLM: whose rules apply (0.10.1 = V1, the default; 0.6.4 = V0)
  std::string vllm_entry;               // vLLM V1: serve (vllm serve) or llm (vllm.LLM)
  std::string from_file, from_command;  // a pasted serving command line (serve_from.hpp)
};

// memplan serve --engine sglang: SGLang's budget for the parsed flags, printed on io.out.
ExitCode run_sglang(const ServeArgs& a, Io& io, const OutputOptions& out);

}  // namespace memplan::cli
