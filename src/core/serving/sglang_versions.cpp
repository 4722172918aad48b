// SGLang's start-up rules by release (see sglang_versions.hpp for the source of each row).
#include "core/serving/sglang_versions.hpp"

#include <algorithm>
#include <cmath>

namespace memplan {
namespace {

constexpr uint64_t k_sgl_gib_mib = 1024;

std::vector<SglangRules> make_sglang_rules() {
  std::vector<SglangRules> t;
  SglangRules r{};
  r.since = {0, 3, 0};
  r.label = "0.3.6.post3";
  r.fraction = SglangFractionRule::by_tp_0_3;
  r.gpu = SglangGpuRule::v0_3;
  r.source = "python/sglang/srt/server_args.py __post_init__ (0.3.6.post3)";
  t.push_back(r);

  r.since = {0, 4, 0};
  r.label = "0.4.4.post4";
  r.fraction = SglangFractionRule::by_tp;
  r.gpu = SglangGpuRule::v0_4;
  r.source = "python/sglang/srt/server_args.py __post_init__ (0.4.3.post4, 0.4.4.post4)";
  t.push_back(r);

  r.since = {0, 4, 5};
  r.label = "0.4.5.post3";
  r.fraction = SglangFractionRule::by_tp_13gib;
  r.source = "python/sglang/srt/server_args.py __post_init__ (0.4.5.post3)";
  t.push_back(r);

  r.since = {0, 4, 6};
  r.label = "0.4.6.post5";
  r.fraction = SglangFractionRule::by_parallel_bump;
  r.source = "python/sglang/srt/server_args.py __post_init__ (0.4.6.post5)";
  t.push_back(r);

  r.since = {0, 4, 7};
  r.label = "0.4.7.post1";
  r.fraction = SglangFractionRule::reserve_bucket;
  r.gpu = SglangGpuRule::v0_4_7;
  r.source = "python/sglang/srt/server_args.py __post_init__ (0.4.7.post1, 0.4.10.post2, 0.5.1, 0.5.2)";
  t.push_back(r);

  r.since = {0, 5, 3};
  r.label = "0.5.4";
  r.fraction = SglangFractionRule::reserve_terms;
  r.gpu = SglangGpuRule::v0_5_3;
  r.source = "python/sglang/srt/server_args.py _handle_gpu_memory_settings (0.5.3, 0.5.4, 0.5.9; PR #10975)";
  t.push_back(r);

  r.since = {0, 5, 10};
  r.label = "0.5.10";
  r.piecewise_reserve = true;
  r.source =
      "python/sglang/srt/server_args.py _handle_gpu_memory_settings, _generate_piecewise_cuda_graph_tokens "
      "(0.5.10, 0.5.15)";
  t.push_back(r);

  r.since = {0, 5, 20};
  r.label = "0.5.23";
  r.gpu = SglangGpuRule::v0_5_20;
  r.source =
      "python/sglang/srt/arg_groups/memory_hook.py handle_gpu_memory_settings, reserve_for_graph_mb; "
      "cuda_graph_hook.py generate_prefill_cuda_graph_batch_sizes (0.5.20, 0.5.23)";
  t.push_back(r);
  return t;
}

double sglang_by_tp(uint64_t tp, double at8) {
  if (tp >= 16) return 0.79;
  if (tp >= 8) return at8;
  if (tp >= 4) return 0.85;
  if (tp >= 2) return 0.87;
  return 0.88;
}

double sglang_round3(double x) { return std::round(x * 1000.0) / 1000.0; }

}  // namespace

const std::vector<SglangRules>& sglang_rules_table() {
  static const std::vector<SglangRules> t = make_sglang_rules();
  return t;
}

std::optional<SglangRules> sglang_rules_for(const VllmVersion& v) {
  std::optional<SglangRules> found;
  for (const SglangRules& r : sglang_rules_table())
    if (r.since.key() <= v.key()) found = r;
  return found;
}

const SglangRules& sglang_newest_rules() { return sglang_rules_table().back(); }

std::string sglang_rules_name(const SglangRules& r) {
  return std::to_string(r.since.major) + "." + std::to_string(r.since.minor) + "." +
         std::to_string(r.since.patch) + " rules (read in " + r.label + ")";
}

SglangGpuDefaults sglang_gpu_defaults(const SglangRules& r, uint64_t mem, uint64_t tp) {
  switch (r.gpu) {
    case SglangGpuRule::v0_3:
      if (mem < 25000) return {2048, 4, "under 25,000 MiB (chunked_prefill_size // 4)"};
      return {8192, 160, "25,000 MiB and more"};
    case SglangGpuRule::v0_4:
      if (mem < 25000) return {2048, tp < 4 ? 8u : 80u, "under 25,000 MiB"};
      return {8192, 160, "25,000 MiB and more"};
    case SglangGpuRule::v0_4_7:
      if (mem < 35 * k_sgl_gib_mib) return {2048, tp < 4 ? 8u : 80u, "under 35 GiB (A10, L40, RTX 4090)"};
      if (mem < 160 * k_sgl_gib_mib) return {8192, 160, "35-160 GiB (H100, H200, A100, H20)"};
      return {16384, 160, "160 GiB and more (B200, MI300)"};
    case SglangGpuRule::v0_5_3:
    case SglangGpuRule::v0_5_20:
      break;
  }
  // server_args.py's / memory_hook.py's buckets for CUDA GPUs (the NPU ones are left out).
  if (mem < 20 * k_sgl_gib_mib) return {2048, 8, "under 20 GiB (T4, RTX 4080)"};
  if (mem < 35 * k_sgl_gib_mib) {
    if (r.gpu == SglangGpuRule::v0_5_20)
      return {4096, tp < 4 ? 48u : 160u, "20-35 GiB (A10, RTX 4090, RTX 5090)"};
    return {2048, tp < 4 ? 24u : 80u, "20-35 GiB (A10, RTX 4090, RTX 5090)"};
  }
  if (mem < 60 * k_sgl_gib_mib) return {4096, tp < 4 ? 32u : 160u, "35-60 GiB (A100 40GB, L40)"};
  if (mem < 90 * k_sgl_gib_mib) return {8192, tp < 4 ? 256u : 512u, "60-90 GiB (H100, A100 80GB)"};
  if (mem < 160 * k_sgl_gib_mib) return {8192, tp < 4 ? 256u : 512u, "90-160 GiB (H20, H200)"};
  return {16384, 512, "160 GiB and more (B200, MI300)"};
}

uint64_t sglang_piecewise_sizes(uint64_t max_tokens) {
  // 4..32 by 4, 48..256 by 16, 288..512 by 32, 576..1024 by 64, 1280..4096 by 256, 4608.. by 512.
  struct Run {
    uint64_t from, to, step;
  };
  const Run runs[] = {{4, 32, 4}, {48, 256, 16}, {288, 512, 32}, {576, 1024, 64}, {1280, 4096, 256}};
  uint64_t n = 0;
  for (const Run& run : runs)
    for (uint64_t s = run.from; s <= run.to && s <= max_tokens; s += run.step) ++n;
  for (uint64_t s = 4608; s <= max_tokens; s += 512) ++n;
  return n;
}

SglangFraction sglang_default_fraction(const SglangRules& r, uint64_t gpu_mem_mib, uint64_t tp, uint64_t pp,
                                       uint64_t chunk, uint64_t graph_bs, bool mla) {
  SglangFraction f;
  const double mem = static_cast<double>(gpu_mem_mib);
  const uint64_t p = tp * pp;
  switch (r.fraction) {
    case SglangFractionRule::by_tp_0_3:
      f.fraction = sglang_by_tp(tp, 0.82);
      f.rule = "by tp alone: 0.88, 0.87 from tp 2, 0.85 from 4, 0.82 from 8, 0.79 from 16";
      return f;
    case SglangFractionRule::by_tp:
      f.fraction = sglang_by_tp(tp, 0.81);
      f.rule = "by tp alone: 0.88, 0.87 from tp 2, 0.85 from 4, 0.81 from 8, 0.79 from 16";
      return f;
    case SglangFractionRule::by_tp_13gib:
      if (gpu_mem_mib <= 81920) {
        f.fraction = sglang_by_tp(tp, 0.81);
        f.rule = "by tp up to 81,920 MiB: 0.88, 0.87 from tp 2, 0.85 from 4, 0.81 from 8, 0.79 from 16";
      } else {
        f.fraction = (mem - 13.0 * 1024) / mem;
        f.rule = "above 81,920 MiB: (gpu_mem - 13 GiB) / gpu_mem, not rounded";
      }
      return f;
    case SglangFractionRule::by_parallel_bump: {
      f.fraction = gpu_mem_mib <= 81920 ? sglang_by_tp(p, 0.81) : 0.88;
      f.rule =
          "by tp x pp up to 81,920 MiB (0.88, 0.87 from 2, 0.85 from 4, 0.81 from 8, 0.79 from 16), else "
          "0.88";
      if (gpu_mem_mib > 96 * k_sgl_gib_mib) {
        f.fraction = std::min(f.fraction + 48.0 * 1024 * (1 - f.fraction) / mem, (mem - 18.0 * 1024) / mem);
        f.rule += "; above 96 GiB min(f + 48 GiB x (1 - f) / gpu_mem, (gpu_mem - 18 GiB) / gpu_mem)";
      }
      return f;
    }
    case SglangFractionRule::reserve_bucket: {
      const double ps = static_cast<double>(p);
      double gib = 32.0;
      if (gpu_mem_mib < 35 * k_sgl_gib_mib)
        gib = 2.8 + ps / 10.0;
      else if (gpu_mem_mib < 90 * k_sgl_gib_mib)
        gib = 9.5 + ps / 2.0;
      else if (gpu_mem_mib < 160 * k_sgl_gib_mib)
        gib = 12.0 + ps / 2.0;
      f.reserved_mib = gib * 1024.0;
      f.fraction = sglang_round3((mem - f.reserved_mib) / mem);
      f.rule =
          "reserved by bucket: (2.8 + tp x pp / 10) GiB below 35 GiB, (9.5 + tp x pp / 2) below 90, "
          "(12 + tp x pp / 2) below 160, else 32 GiB";
      return f;
    }
    case SglangFractionRule::reserve_terms:
      break;
  }
  double reserved = 512.0;
  reserved += static_cast<double>(std::max<uint64_t>(chunk, 2048)) * 1.5;
  reserved += static_cast<double>(graph_bs) * 2.0;
  reserved += static_cast<double>(p) / 8.0 * 1024.0;
  if (r.piecewise_reserve && pp == 1) {  // pp > 1 turns the prefill graphs off
    f.piecewise_mib = mla ? 1.5 * 1024 : static_cast<double>(sglang_piecewise_sizes(chunk)) * 8.0;
    reserved += f.piecewise_mib;
  }
  if (gpu_mem_mib > 60 * k_sgl_gib_mib) reserved = std::max(reserved, 10.0 * 1024.0);
  f.reserved_mib = reserved;
  f.fraction = mem > reserved ? sglang_round3((mem - reserved) / mem) : 0.0;
  f.rule = "reserved = 512 + max(chunk, 2048) x 1.5 + cuda_graph_max_bs x 2 + tp x pp / 8 x 1024";
  if (r.piecewise_reserve && pp == 1)
    f.rule += mla ? " + 1.5 GiB (MLA prefill graphs)" : " + prefill graph sizes x 8";
  f.rule += " MiB, at least 10 GiB above 60 GiB";
  return f;
}

}  // namespace memplan
