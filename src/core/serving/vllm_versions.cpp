// vLLM's start-up rules by release (see vllm_versions.hpp for the source of each row).
#include "core/serving/vllm_versions.hpp"

#include <cctype>
#include <cmath>

#include "core/base/decimal_text.hpp"

namespace memplan {
namespace {

// One part of a version number: digits, at most 6 of them.
bool version_part(std::string_view& t, uint32_t& out) {
  size_t n = 0;
  uint32_t v = 0;
  while (n < t.size() && n < 7 && std::isdigit(static_cast<unsigned char>(t[n]))) {
    v = v * 10 + static_cast<uint32_t>(t[n] - '0');
    ++n;
  }
  if (n == 0 || n > 6) return false;
  out = v;
  t.remove_prefix(n);
  return true;
}

std::vector<VllmRules> make_vllm_rules() {
  const char* sort =
      "PyTorch's sort path: logits 2 B + fp32 copy 4 B + sorted values 4 B + int64 indices 8 B + "
      "the segmented sort's scratch 20 B; where FlashInfer is installed (the vllm/vllm-openai image) "
      "0.8-0.11 "
      "sample with it instead, about 14 B";
  const char* kernel =
      "Triton/FlashInfer top-k/top-p: logits 2 B + fp32 copy 4 B + probabilities 4 B + "
      "the sampling draw 4 B";
  std::vector<VllmRules> t;
  VllmRules r{};
  r = VllmRules{};
  r.since = {0, 6, 0};
  r.label = "0.6.4.post1";
  r.v1 = false;
  r.context_in_non_torch = true;
  r.messages = VllmMessages::v0;
  r.sampler_rule =
      "V0's sampler is not modelled (the forward of max(max_model_len, 2048) tokens sets the peak)";
  r.source = "vllm/worker/worker.py determine_num_available_blocks, vllm/config.py SchedulerConfig";
  t.push_back(r);

  r.since = {0, 7, 0};
  r.label = "0.7.3";
  r.context_in_non_torch = false;
  r.source = "vllm/worker/worker.py determine_num_available_blocks, vllm/utils.py memory_profiling";
  t.push_back(r);

  r = VllmRules{};
  r.since = {0, 8, 0};
  r.label = "0.8.5";
  r.context_in_non_torch = true;
  r.sampler_bytes_per_logit = k_vllm_sampler_sort_bytes;
  r.a100_small_defaults = false;
  r.messages = VllmMessages::v1_0_8;
  r.sampler_rule = sort;
  r.source = "vllm/v1/worker/gpu_worker.py determine_available_memory, gpu_model_runner.py profile_run";
  t.push_back(r);

  r.since = {0, 9, 0};
  r.label = "0.10.1";
  r.context_in_non_torch = false;
  r.a100_small_defaults = true;
  r.messages = VllmMessages::v1;
  r.source = "vllm/v1/worker/gpu_worker.py init_device (snapshot before init_worker_distributed_environment)";
  t.push_back(r);

  r.since = {0, 11, 0};
  r.label = "0.11.0";
  r.comm_in_non_torch = false;
  r.source = "vllm/v1/worker/gpu_worker.py init_device (snapshot after NCCL is initialized)";
  t.push_back(r);

  r.since = {0, 13, 0};
  r.label = "0.13.0";
  r.messages = VllmMessages::v1_docs_link;
  r.source = "vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory";
  t.push_back(r);

  r.since = {0, 14, 0};
  r.label = "0.14.0";
  r.messages = VllmMessages::v1_round;
  r.source = "vllm/v1/core/kv_cache_utils.py _check_enough_kv_cache_memory (format_gib)";
  t.push_back(r);

  r.since = {0, 17, 0};
  r.label = "0.17.0";
  r.sampler_bytes_per_logit = k_vllm_sampler_kernel_bytes;
  r.sampler_rule = kernel;
  r.source = "vllm/v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p (Triton for 8 requests or more)";
  t.push_back(r);

  r.since = {0, 20, 0};
  r.label = "0.20.0";
  r.cuda_graphs_before_kv = true;
  r.source =
      "vllm/envs.py VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1, gpu_model_runner.py profile_cudagraph_memory";
  t.push_back(r);

  r.since = {0, 22, 0};
  r.label = "0.22.0";
  r.messages = VllmMessages::v1_cpu_hint;
  r.source = "vllm/v1/core/kv_cache_utils.py _check_enough_kv_cache_memory";
  t.push_back(r);

  r.since = {0, 30, 0};
  r.label = "0.30.0";
  r.tier_160gib = true;
  r.source = "vllm/engine/arg_utils.py _set_default_args (160 GiB tier)";
  t.push_back(r);

  r.since = {0, 34, 0};
  r.label = "0.34.0";
  r.messages = VllmMessages::v1_planning;
  r.source =
      "vllm/v1/worker/gpu_worker.py, vllm/v1/worker/gpu/model_runner.py, vllm/v1/core/kv_cache_planning.py";
  t.push_back(r);
  return t;
}

// "%.2f" (vLLM up to 0.13) or Python's str(round(x, 2)) (format_gib, 0.14 on).
std::string gib_text(double g, bool python_round) {
  if (!python_round) return fixed_decimals(g, 2);
  std::string s = fixed_decimals(std::round(g * 100.0) / 100.0, 2);
  if (s.size() > 1 && s.back() == '0') s.pop_back();  // "28.50" -> "28.5", "3.00" -> "3.0"
  return s;
}

}  // namespace

std::optional<VllmVersion> parse_vllm_version(std::string_view t) {
  if (!t.empty() && (t[0] == 'v' || t[0] == 'V')) t.remove_prefix(1);
  VllmVersion v;
  if (!version_part(t, v.major) || t.empty() || t[0] != '.') return std::nullopt;
  t.remove_prefix(1);
  if (!version_part(t, v.minor)) return std::nullopt;
  if (!t.empty()) {
    if (t[0] != '.') return std::nullopt;
    t.remove_prefix(1);
    if (!version_part(t, v.patch)) return std::nullopt;
  }
  // A fourth part (0.10.1.1) or a post release (0.6.4.post1): the same rules as X.Y.Z.
  if (!t.empty()) {
    if (t[0] != '.') return std::nullopt;
    t.remove_prefix(1);
    if (t.substr(0, 4) == "post") t.remove_prefix(4);
    uint32_t extra = 0;
    if (!version_part(t, extra) || !t.empty()) return std::nullopt;
  }
  return v;
}

const std::vector<VllmRules>& vllm_rules_table() {
  static const std::vector<VllmRules> table = make_vllm_rules();
  return table;
}

std::optional<VllmRules> vllm_rules_for(const VllmVersion& v) {
  std::optional<VllmRules> found;
  for (const VllmRules& r : vllm_rules_table())
    if (r.since.key() <= v.key()) found = r;
  return found;
}

const VllmRules& vllm_newest_rules() { return vllm_rules_table().back(); }

const VllmRules& vllm_v0_rules() { return vllm_rules_table().front(); }

std::string vllm_start_refusal(const VllmRules& rules, const VllmRefusal& r) {
  const VllmMessages m = rules.messages;
  const std::string docs =
      "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.";
  const std::string cpu =
      "Try increasing `gpu_memory_utilization` when initializing the engine (this flag also controls CPU "
      "memory reservation on the CPU backend, despite its name).";
  const std::string plain = "Try increasing `gpu_memory_utilization` when initializing the engine.";
  if (r.no_memory) {
    std::string s = "No available memory for the cache blocks. ";
    if (m == VllmMessages::v1_cpu_hint || m == VllmMessages::v1_planning) return s + cpu + " " + docs;
    s += plain;
    if (m == VllmMessages::v1_docs_link || m == VllmMessages::v1_round) s += " " + docs;
    return s;
  }
  if (m == VllmMessages::v0)
    return "The model's max seq len (" + std::to_string(r.max_model_len) +
           ") is larger than the maximum number of tokens that can be stored in KV cache (" +
           std::to_string(r.kv_tokens) +
           "). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
           "engine.";
  const bool round =
      m == VllmMessages::v1_round || m == VllmMessages::v1_cpu_hint || m == VllmMessages::v1_planning;
  const bool models_s = m != VllmMessages::v1_cpu_hint && m != VllmMessages::v1_planning;
  std::string s = std::string("To serve at least one request with the ") +
                  (models_s ? "models's" : "model's") + " max seq len (" + std::to_string(r.max_model_len) +
                  "), (" + gib_text(r.needed_gib, round) +
                  " GiB KV cache is needed, which is larger than the available KV cache memory (" +
                  gib_text(r.available_gib, round) + " GiB).";
  const std::string est = r.estimated_len
                              ? "Based on the available memory, the estimated maximum model length is " +
                                    std::to_string(r.estimated_len) + "."
                              : std::string();
  const std::string try_len =
      "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";
  switch (m) {
    case VllmMessages::v1_0_8:  // 0.8.5's estimate stops after its first string (a missing parenthesis)
      return s + (r.estimated_len ? " Based on the available memory," : "") + "  " + try_len;
    case VllmMessages::v1:
      return s + " " + est + " " + try_len;
    case VllmMessages::v1_docs_link:
      return s + " " + est + " " + try_len + " " + docs;
    case VllmMessages::v1_round:
      return s + " " + (est.empty() ? "" : est + " ") + try_len + " " + docs;
    case VllmMessages::v1_cpu_hint:
      return s + " " + (est.empty() ? "" : est + " ") +
             "Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or "
             "decreasing `max_model_len` when initializing the engine. " +
             docs;
    default:  // v1_planning
      return s + " " + (est.empty() ? "" : est + " ") + cpu +
             " Decreasing `max_model_len` also reduces what is needed. " + docs;
  }
}

}  // namespace memplan
