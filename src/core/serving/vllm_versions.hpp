#pragma once
// vLLM's start-up memory rules, release by release: one row per release where a rule that moves the
// KV-cache budget changed, each read from that release's source as published on PyPI (the sdist
// vllm-X.Y.Z.tar.gz). `--vllm-version X.Y[.Z]` takes the newest row at or below it; the default is
// the newest release checked (vLLM 0.34.0, 2026-11-16). The rows, with the files they come from:
//
//  0.6.0  V0. vllm/worker/worker.py determine_num_available_blocks (read in 0.6.4.post1): KV =
//         util x total - torch peak - non-torch, non-torch = used device memory - torch's after the
//         profile run, from an empty device: the CUDA context is in it.
//  0.7.0  V0 with vllm/utils.py memory_profiling (read in 0.7.3): the snapshot is taken in
//         init_device before the distributed set-up, and only the non-torch increase since it is
//         subtracted (no CUDA context); the custom all-reduce's buffers come after it (counted).
//  0.8.0  V1 by default (envs.py VLLM_USE_V1 "1"). vllm/v1/worker/gpu_worker.py (read in 0.8.5):
//         peak = torch's allocated peak + (mem_get_info's used - torch's allocated): the CUDA
//         context is subtracted again. The profile run warms the sampler up (gpu_model_runner.py
//         _dummy_sampler_run) over min(max_num_seqs, max_num_batched_tokens) requests x vocab with
//         top-k and top-p set, through v1/sample/ops/topk_topp_sampler.py's PyTorch path
//         (apply_top_k_top_p sorts the fp32 logits; FlashInfer is not a pip dependency before 0.12).
//         Scheduler defaults by GPU (arg_utils.py): 70 GiB or more, A100 80GB included.
//  0.9.0  gpu_worker.py uses memory_profiling with a snapshot taken in init_device before
//         init_worker_distributed_environment (read in 0.9.2 and 0.10.1.1): the context is not
//         subtracted, NCCL's set-up and the custom all-reduce are. arg_utils.py keeps A100s on the
//         small defaults (vLLM PR 17885).
//  0.11.0 V0 is gone; the snapshot moves after the distributed set-up ("Now take memory snapshot
//         after NCCL is initialized", read in 0.11.0): the custom all-reduce's buffers and NCCL's
//         communicators are no longer subtracted, only what grows after (lazily built NCCL buffers).
//  0.13.0 The start-up errors end "See https://docs.vllm.ai/en/latest/configuration/
//         conserving_memory/ for more details." (v1/core/kv_cache_utils.py; not in 0.12.0).
//  0.14.0 ... and print their GiB with format_gib (Python's round(x, 2): "28.5", not "28.50").
//  0.17.0 apply_top_k_top_p uses a Triton kernel for 8 requests or more (apply_top_k_top_p_triton,
//         not in 0.16.0): no sort, the sampler's peak falls to the logits and their probabilities.
//  0.20.0 CUDA-graph memory is profiled before the KV cache and subtracted
//         (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to "1" in envs.py; "0" in 0.19.0;
//         gpu_model_runner.py profile_cudagraph_memory). 0.21.0 turns the FlashInfer sampler on
//         by default (same peak here: logits, fp32 copy, probabilities).
//  0.22.0 The start check reads "the model's max seq len" (0.21.0: "the models's") and names the
//         CPU backend in its hint (v1/core/kv_cache_utils.py).
//  0.30.0 arg_utils.py: GPUs of 160 GiB or more get 16,384 tokens and 1,024 sequences for
//         vllm serve too (not in 0.26.0).
//  0.34.0 the start check moves to v1/core/kv_cache_planning.py with a new hint; the profile runs
//         the sampler twice (model-dtype pass, then the fp32 warm-up pass,
//         v1/worker/gpu/model_runner.py), one after the other: the same peak.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memplan {

// A release number X.Y.Z (a .postN or fourth part is read and dropped).
struct VllmVersion {
  uint32_t major = 0, minor = 0, patch = 0;
  uint32_t key() const { return major * 1000000 + minor * 1000 + patch; }
};

// "0.11", "0.11.0", "v0.10.1.1", "0.6.4.post1"; none when it is not a version number.
std::optional<VllmVersion> parse_vllm_version(std::string_view text);

// How a release words the start-up refusals (vllm_start_refusal).
// v0: worker.py / cache_engine (0.6-0.7); v1_0_8: 0.8's (its estimate cut short); v1: 0.9-0.12;
// v1_docs_link: 0.13 adds the docs link; v1_round: 0.14 prints GiB as Python's round(x, 2);
// v1_cpu_hint: 0.22 "the model's" and the CPU-backend hint; v1_planning: 0.34 kv_cache_planning.py.
enum class VllmMessages { v0, v1_0_8, v1, v1_docs_link, v1_round, v1_cpu_hint, v1_planning };

struct VllmRules {
  VllmVersion since;                     // the first release these rules are read for
  const char* label = "";                // the release the row was read in, shown in the output
  bool v1 = true;                        // the engine that runs by default
  bool context_in_non_torch = false;     // the CUDA context is subtracted (0.6 V0, 0.8 V1)
  bool comm_in_non_torch = true;         // the custom all-reduce (and NCCL set-up) subtracted
  uint32_t sampler_bytes_per_logit = 0;  // bytes per request x vocab at the sampler's peak; 0 = V0
  bool a100_small_defaults = true;       // "a100" in the name keeps the small scheduler defaults
  bool tier_160gib = false;              // >= 160 GiB: 16,384 tokens for vllm serve as well
  bool cuda_graphs_before_kv = false;    // CUDA-graph memory subtracted before the KV cache
  VllmMessages messages = VllmMessages::v1;
  const char* sampler_rule = "";  // what the sampler's bytes per logit are made of
  const char* source = "";        // the files the row was read from
};

// The sampler's live tensors per request x vocab element (the dummy sampler run):
//  sort path (0.8-0.16): the model-dtype logits 2 B + their fp32 copy 4 B + the sorted values 4 B and
//   int64 indices 8 B + PyTorch's segmented sort scratch (two int2 index/segment buffers 16 B, a key
//   copy 4 B; cub's own temp storage not counted) = 38 B;
//  Triton / FlashInfer path (0.17 on): logits 2 B + fp32 copy 4 B + softmax probabilities 4 B + the
//   exponential draw (random_sample's q) or the kernel's masked copy 4 B = 14 B.
inline constexpr uint32_t k_vllm_sampler_sort_bytes = 38;
inline constexpr uint32_t k_vllm_sampler_kernel_bytes = 14;

// Every row, oldest first.
const std::vector<VllmRules>& vllm_rules_table();
// The newest row at or below `v`; none below 0.6 (no row).
std::optional<VllmRules> vllm_rules_for(const VllmVersion& v);
// The default: the newest release's rules.
const VllmRules& vllm_newest_rules();
// The rows the old spellings name: "v0" and 0.6.4 (V0), "v1" and 0.10.1 (the former default).
const VllmRules& vllm_v0_rules();

// The error text a release stops with. `kind`: no memory left for the KV cache, or one request of
// max_model_len that does not fit (V1: needed and available GiB, the estimated longest length, 0 =
// none; V0: the tokens the cache holds).
struct VllmRefusal {
  bool no_memory = false;
  uint64_t max_model_len = 0;
  double needed_gib = 0.0, available_gib = 0.0;
  uint64_t estimated_len = 0;  // V1 ("Based on the available memory, ...")
  uint64_t kv_tokens = 0;      // V0
};
std::string vllm_start_refusal(const VllmRules& rules, const VllmRefusal& r);

}  // namespace memplan
