#pragma once
// SGLang's start-up rules, release by release: one row per release where a default that moves the
// KV pool changed, each read from that release's wheel on PyPI (sglang-X.Y.Z-py3-none-any.whl,
// python/sglang/srt/server_args.py; from 0.5.20 sglang/srt/arg_groups/memory_hook.py).
// `--sglang-version X.Y[.Z]` takes the newest row at or below it (a .postN is dropped); the default is
// the newest release on PyPI (0.5.23). The rows:
//
//  0.3.0  (read in 0.3.6.post3) mem_fraction_static by tp: 0.88, 0.87 from 2, 0.85 from 4, 0.82
//         from 8, 0.79 from 16. chunked_prefill_size 8192 (// 4 = 2048 below 25,000 MiB),
//         cuda_graph_max_bs 160 (4 below 25,000 MiB).
//  0.4.0  (read in 0.4.3.post4 and 0.4.4.post4) 0.81 from tp 8; chunked_prefill_size 2048 below
//         25,000 MiB else 8192; cuda_graph_max_bs 8 (tp < 4) or 80 below 25,000 MiB, else 160.
//  0.4.5  (read in 0.4.5.post3) above 81,920 MiB: (gpu_mem - 13 GiB) / gpu_mem, not rounded.
//  0.4.6  (read in 0.4.6.post5) by tp x pp; above 96 GiB:
//         min(f + 48 GiB x (1 - f) / gpu_mem, (gpu_mem - 18 GiB) / gpu_mem). (0.4.7 itself adds
//         0.79 above 180,000 MiB; its .post1 is the next row, and the row key drops .postN.)
//  0.4.7  (read in 0.4.7.post1, the same in 0.4.10.post2, 0.5.1 and 0.5.2) reserved_mem by bucket:
//         (2.8 + p / 10) GiB below 35 GiB, (9.5 + p / 2) below 90, (12 + p / 2) below 160, else
//         32 GiB; mem_fraction_static = round((gpu_mem - reserved) / gpu_mem, 3). chunked_prefill_size
//         2048 below 35 GiB, 8192 below 160 GiB, else 16384.
//  0.5.3  (read in 0.5.3 and 0.5.4, the same in 0.5.6.post2 and 0.5.9; PR #10975)
//         _handle_gpu_memory_settings: reserved = 512 + max(chunk, 2048) x 1.5 + cuda_graph_max_bs x 2
//         + tp x pp / 8 x 1024 MiB, at least 10 GiB above 60 GiB; the buckets' chunk and graph sizes.
//  0.5.10 (read in 0.5.10, the same in 0.5.15 and 0.5.19) piecewise CUDA graphs on by default
//         (disable_piecewise_cuda_graph False): + 8 MiB per captured prefill size (1.5 GiB with
//         MLA), before the 10 GiB floor; the sizes run 4..32 by 4, 48..256 by 16, 288..512 by 32,
//         576..1024 by 64, 1280..4096 by 256, 4608.. by 512 up to chunked_prefill_size (2048 MLA).
//         pp > 1 turns them off (_handle_piecewise_cuda_graph; 0.5.23 cuda_graph_hook.py likewise).
//  0.5.20 (read in 0.5.20 and 0.5.23, arg_groups/memory_hook.py) 20-35 GiB: chunked_prefill_size
//         4096, cuda_graph_max_bs 48 (tp < 4) or 160.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/serving/vllm_versions.hpp"

namespace memplan {

// How the default mem_fraction_static is made.
enum class SglangFractionRule {
  by_tp_0_3,         // 0.3: 0.82 from tp 8
  by_tp,             // 0.4.0: 0.81 from tp 8
  by_tp_13gib,       // 0.4.5: above 81,920 MiB (gpu_mem - 13 GiB) / gpu_mem
  by_parallel_bump,  // 0.4.6: by tp x pp, above 96 GiB the 48 GiB / 18 GiB bump
  reserve_bucket,    // 0.4.7: reserved GiB by GPU bucket
  reserve_terms,     // 0.5.3: 512 + chunk x 1.5 + graphs x 2 + parallel, 10 GiB floor
};

// How chunked_prefill_size and cuda_graph_max_bs default by GPU memory.
enum class SglangGpuRule { v0_3, v0_4, v0_4_7, v0_5_3, v0_5_20 };

struct SglangRules {
  VllmVersion since;       // the first release these rules are read for
  const char* label = "";  // the release the row was read in, shown in the output
  SglangFractionRule fraction = SglangFractionRule::reserve_terms;
  SglangGpuRule gpu = SglangGpuRule::v0_5_3;
  bool piecewise_reserve = false;  // + 8 MiB per prefill graph size (1.5 GiB with MLA)
  const char* source = "";
};

// Every row, oldest first.
const std::vector<SglangRules>& sglang_rules_table();
// The newest row at or below `v`; none below 0.3.
std::optional<SglangRules> sglang_rules_for(const VllmVersion& v);
// The default: the newest release's rules.
const SglangRules& sglang_newest_rules();
// "SGLang 0.5.23 rules (read in 0.5.23)" style name of a row.
std::string sglang_rules_name(const SglangRules& r);

// chunked_prefill_size and cuda_graph_max_bs by GPU memory (MiB), as the row's server_args.py buckets them.
struct SglangGpuDefaults {
  uint64_t chunked_prefill_size = 0;
  uint64_t cuda_graph_max_bs = 0;
  std::string bucket;  // "20-35 GiB (A10, RTX 4090, RTX 5090)", ...
};
SglangGpuDefaults sglang_gpu_defaults(const SglangRules& r, uint64_t gpu_mem_mib, uint64_t tp);

// The default mem_fraction_static of a row. `reserved_mib` is set for the reserve rules (0 else);
// `rule` says in words how the fraction was made.
struct SglangFraction {
  double fraction = 0.0;
  double reserved_mib = 0.0;
  double piecewise_mib = 0.0;  // the prefill graphs' part of the reserve
  std::string rule;
};
SglangFraction sglang_default_fraction(const SglangRules& r, uint64_t gpu_mem_mib, uint64_t tp, uint64_t pp,
                                       uint64_t chunked_prefill_size, uint64_t cuda_graph_max_bs, bool mla);

// The piecewise prefill graph sizes up to `max_tokens` (server_args.py
// _generate_piecewise_cuda_graph_tokens).
uint64_t sglang_piecewise_sizes(uint64_t max_tokens);

}  // namespace memplan
