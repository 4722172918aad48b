#include "cli/render_oom.hpp"

#include "core/base/terminal_text.hpp"

#include <cstdio>

#include <memplan/cuda_runtime.hpp>

namespace memplan::cli {
namespace {

std::string bytes(uint64_t b, Units u) { return format_bytes(b, u); }

std::string percent(uint64_t part, uint64_t whole) {
  if (whole == 0) return "";
  char s[32];
  std::snprintf(s, sizeof s, "%.0f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return s;
}

std::string device_name(const OomMessage& m) {
  return m.device ? "GPU " + std::to_string(*m.device) : "the GPU";
}

const char* buffer_name(LlamaBuffer b) {
  switch (b) {
    case LlamaBuffer::weights:
      return "model weights";
    case LlamaBuffer::kv_cache:
      return "KV cache";
    case LlamaBuffer::compute:
      return "compute buffer";
    case LlamaBuffer::unknown:
      break;
  }
  return "buffer";
}

void pytorch_findings(const OomMessage& m, Units u, bool plan_given, std::vector<std::string>& out) {
  const OomReading r = read_pytorch_oom(m);
  const uint64_t req = m.requested.value_or(0);
  if (r.request_exceeds_gpu)
    out.push_back(
        "The one allocation asked for (" + bytes(req, u) + ") is larger than the whole " + device_name(m) +
        " (" + bytes(*m.total, u) +
        "): no allocator setting can make it fit. Make that tensor smaller (batch, sequence length, "
        "image size) or compute it in chunks.");
  if (r.available && m.free && !r.free_but_failed) {
    const std::string parts = bytes(*m.free, u) + " free on the device + " +
                              bytes(r.reserved_unallocated.value_or(0), u) +
                              " reserved by PyTorch but unallocated";
    if (r.shortfall)
      out.push_back("At that moment at most " + bytes(*r.available, u) + " could be handed out (" + parts +
                    "): " + bytes(*r.shortfall, u) + " short of the " + bytes(req, u) + " asked.");
    else
      out.push_back("At that moment " + bytes(*r.available, u) + " was nominally available (" + parts +
                    "), at least the " + bytes(req, u) +
                    " asked: the bytes were there, but not in one piece.");
  }
  if (r.fragmentation) {
    const uint64_t un = *r.reserved_unallocated;
    std::string s = "Fragmentation: PyTorch's cache held " + bytes(un, u) + " in blocks holding no tensor";
    if (m.reserved)
      s += " (" + percent(un, *m.reserved) + " of the " + bytes(*m.reserved, u) + " it reserved)";
    if (un >= req) s += ", more than the " + bytes(req, u) + " asked, but no single block was large enough";
    s += ". Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch 2.1 and later; "
         "max_split_size_mb:N before) so cached segments grow in place instead of splitting.";
    out.push_back(s);
  }
  if (r.free_but_failed)
    out.push_back(
        "The device reported " + bytes(*m.free, u) + " free, at least the " + bytes(req, u) +
        " asked, yet cudaMalloc failed: the limit was elsewhere - a per-process cap "
        "(torch.cuda.set_per_process_memory_fraction), another process allocating at the same moment, "
        "or the driver's own limits (Windows WDDM keeps part of the GPU).");
  if (r.allocated_exceeds_total)
    out.push_back(
        "PyTorch reports more allocated (" + bytes(*m.allocated, u) + ") than the GPU has (" +
        bytes(*m.total, u) +
        "): the driver is backing GPU memory with system memory (Windows shared GPU memory), which is "
        "slow; plan for the GPU's own " +
        bytes(*m.total, u) + ".");
  if (r.other_processes)
    out.push_back("Other processes (and the driver) hold " + bytes(*r.other_processes, u) + " = " +
                  bytes(*m.total, u) + " total - " + bytes(*m.free, u) + " free - " +
                  bytes(*m.process_in_use, u) + " this process" +
                  (*r.other_processes > *m.total / 20
                       ? ": " + percent(*r.other_processes, *m.total) + " of the GPU; nvidia-smi lists them."
                       : "."));
  else if (!m.processes.empty()) {
    uint64_t listed = 0;
    std::string who;
    for (const auto& [pid, b] : m.processes) {
      listed += b;
      who += (who.empty() ? "" : ", ") + std::string("process ") + std::to_string(pid) + " " + bytes(b, u);
    }
    std::string s = "Processes on the GPU: " + who + ".";
    if (m.reserved && m.processes.size() == 1 && listed >= *m.reserved)
      s += " PyTorch reserved " + bytes(*m.reserved, u) + " of it, so that is most likely this process; " +
           bytes(listed - *m.reserved, u) + " of it is outside PyTorch's cache (CUDA context, libraries).";
    out.push_back(s);
  } else if (r.outside_allocator)
    out.push_back(
        bytes(*r.outside_allocator, u) + " = " + bytes(*m.total, u) + " total - " + bytes(*m.free, u) +
        " free - " + bytes(*m.reserved, u) +
        " reserved is held outside PyTorch's cache: this process's CUDA context and libraries (memplan "
        "predicts the context per GPU: 1 KiB of stack for each thread the GPU keeps resident, plus " +
        bytes(k_cuda_context_rest_bytes, u) +
        " measured on an H200 with lazy loading) and any other process on the GPU.");
  if (r.process_non_pytorch)
    out.push_back("This process holds " + bytes(*r.process_non_pytorch, u) +
                  " outside PyTorch's cache = " + bytes(*m.process_in_use, u) + " in use - " +
                  bytes(*m.reserved, u) + " reserved (CUDA context, cuBLAS/cuDNN workspaces, NCCL buffers).");
  if (m.allocated && m.total && !r.allocated_exceeds_total)
    out.push_back("Live tensors held " + bytes(*m.allocated, u) + " (" + percent(*m.allocated, *m.total) +
                  " of the GPU): that is the run itself (weights, gradients, optimizer state, activations)" +
                  (plan_given
                       ? std::string(".")
                       : std::string("; give why-oom the run's flags (or --plan) to see which term it is "
                                     "and the cheapest fix.")));
}

}  // namespace

const char* oom_kind_name(OomKind k) {
  switch (k) {
    case OomKind::pytorch:
      return "pytorch";
    case OomKind::vllm_max_seq_len:
      return "vllm_max_seq_len";
    case OomKind::vllm_kv_needed:
      return "vllm_kv_needed";
    case OomKind::vllm_no_cache_blocks:
      return "vllm_no_cache_blocks";
    case OomKind::llama_cpp:
      return "llama_cpp";
  }
  return "?";
}

std::string oom_title(const OomMessage& m) {
  switch (m.kind) {
    case OomKind::pytorch:
      return "PyTorch: CUDA out of memory on " + device_name(m) +
             (m.cached_wording  ? ", oldest wording"
              : m.older_wording ? ", older wording"
                                : "");
    case OomKind::vllm_max_seq_len:
      return "vLLM: the KV cache cannot hold one sequence of the max length";
    case OomKind::vllm_kv_needed:
      return "vLLM (V1 engine): the KV cache cannot hold one sequence of the max length";
    case OomKind::vllm_no_cache_blocks:
      return "vLLM: no memory left for the KV cache";
    case OomKind::llama_cpp:
      return std::string("llama.cpp: cudaMalloc failed for the ") + buffer_name(m.buffer) +
             (m.buffer_device.empty() ? "" : " on " + terminal_field(m.buffer_device));
  }
  return "";
}

std::vector<OomFact> oom_facts(const OomMessage& m, Units u) {
  std::vector<OomFact> f;
  auto add = [&](const std::optional<uint64_t>& v, const char* label, const char* meaning) {
    if (v) f.push_back({label, bytes(*v, u), meaning});
  };
  switch (m.kind) {
    case OomKind::pytorch:
      add(m.requested, "asked for", "the one allocation that failed");
      add(m.total, "GPU total", "the device's capacity as CUDA reports it");
      add(m.free, "free", "free on the device at that moment, every process counted");
      add(m.process_in_use, "this process", "in use by this process, inside and outside PyTorch");
      for (const auto& [pid, b] : m.processes)
        f.push_back({"process " + std::to_string(pid), bytes(b, u), "in use by that process"});
      add(m.allocated, "allocated", "held by live tensors");
      add(m.reserved, "reserved",
          m.cached_wording ? "held by PyTorch's caching allocator (printed as \"cached\")"
                           : "held by PyTorch's caching allocator, tensors included");
      add(m.reserved_unallocated, "reserved, unallocated", "cached by PyTorch but holding no tensor");
      break;
    case OomKind::vllm_max_seq_len:
      f.push_back({"max seq len", group_thousands(m.max_seq_len) + " tokens",
                   "max_model_len: one request may be this long"});
      f.push_back({"KV cache", group_thousands(m.kv_tokens) + " tokens",
                   "what the memory left for the KV cache holds"});
      break;
    case OomKind::vllm_kv_needed:
      f.push_back({"max seq len", group_thousands(m.max_seq_len) + " tokens", "max_model_len"});
      add(m.kv_needed, "KV cache needed", "for one request of max_model_len tokens");
      add(m.kv_available, "KV cache memory", "left after weights and the profiled activation peak");
      if (m.estimated_max_len)
        f.push_back({"fits", group_thousands(m.estimated_max_len) + " tokens",
                     "vLLM's estimate of the longest that fits"});
      break;
    case OomKind::vllm_no_cache_blocks:
      break;
    case OomKind::llama_cpp:
      if (m.buffer_bytes)
        f.push_back({"buffer", bytes(*m.buffer_bytes, u) + " (" + group_thousands(*m.buffer_bytes) + " B)",
                     std::string("the ") + buffer_name(m.buffer) + " that cudaMalloc could not place"});
      break;
  }
  return f;
}

std::vector<std::string> oom_findings(const OomMessage& m, Units u, bool plan_given) {
  std::vector<std::string> out;
  switch (m.kind) {
    case OomKind::pytorch:
      pytorch_findings(m, u, plan_given, out);
      break;
    case OomKind::vllm_max_seq_len:
      out.push_back(
          "vLLM takes gpu_memory_utilization (default 0.9) of the GPU, loads the weights, profiles one "
          "forward pass and gives the rest to the KV cache: room for " +
          group_thousands(m.kv_tokens) + " tokens. One request of the max length needs " +
          group_thousands(m.max_seq_len) + ": " +
          (m.max_seq_len > m.kv_tokens ? group_thousands(m.max_seq_len - m.kv_tokens) : "0") +
          " tokens more.");
      out.push_back(
          "Fixes, cheapest first: --max-model-len " + std::to_string(m.kv_tokens) +
          " or less (a shorter context); --kv-cache-dtype fp8 (half the bytes per token); a higher "
          "--gpu-memory-utilization when nothing else uses the GPU; --tensor-parallel-size 2 (weights "
          "and cache split over two GPUs).");
      break;
    case OomKind::vllm_kv_needed:
      if (m.kv_needed && m.kv_available)
        out.push_back("One request of " + group_thousands(m.max_seq_len) + " tokens needs " +
                      bytes(*m.kv_needed, u) + " of KV cache; " + bytes(*m.kv_available, u) +
                      " was left after the weights and the profiled activation peak" +
                      (*m.kv_needed > *m.kv_available
                           ? ": " + bytes(*m.kv_needed - *m.kv_available, u) + " short."
                           : "."));
      out.push_back(
          std::string("Fixes, cheapest first: --max-model-len ") +
          (m.estimated_max_len ? std::to_string(m.estimated_max_len) + " or less (vLLM's own estimate)"
                               : "smaller") +
          "; --kv-cache-dtype fp8 (half the bytes per token); a higher --gpu-memory-utilization when "
          "nothing else uses the GPU; --tensor-parallel-size 2.");
      break;
    case OomKind::vllm_no_cache_blocks:
      out.push_back(
          "Nothing was left for the KV cache: the weights plus the profiled activation peak (and memory "
          "other processes hold) already take gpu_memory_utilization x the GPU's memory.");
      out.push_back(
          "Fixes: a higher --gpu-memory-utilization when the GPU is otherwise free (a lower one never "
          "helps); stop other processes on the GPU; a smaller or quantized model; "
          "--tensor-parallel-size; a smaller --max-num-batched-tokens to shrink the profiled peak.");
      break;
    case OomKind::llama_cpp:
      switch (m.buffer) {
        case LlamaBuffer::weights:
          out.push_back(
              "The model's weights placed on this GPU do not fit: offload fewer layers (-ngl N), spread "
              "them over GPUs (--tensor-split), or take a smaller quantization.");
          break;
        case LlamaBuffer::kv_cache:
          out.push_back(
              "The KV cache for the context does not fit: a smaller context (-c), a quantized cache "
              "(--cache-type-k q8_0 --cache-type-v q8_0, with flash attention), or fewer parallel "
              "slots (--parallel).");
          break;
        case LlamaBuffer::compute:
          out.push_back(
              "The compute (scratch) buffer for one batch does not fit: a smaller micro-batch (-ub) "
              "or batch (-b), or a smaller context (-c); with several GPUs, pipeline parallelism keeps "
              "several copies of it.");
          break;
        case LlamaBuffer::unknown:
          out.push_back(
              "A buffer did not fit on the GPU: the lines before the failure in the log say which "
              "(load_tensors: weights; llama_kv_cache_init: KV cache; compute buffer).");
          break;
      }
      break;
  }
  return out;
}

std::vector<std::string> oom_finding_codes(const OomMessage& m) {
  std::vector<std::string> c;
  if (m.kind != OomKind::pytorch) {
    c.push_back(oom_kind_name(m.kind));
    return c;
  }
  const OomReading r = read_pytorch_oom(m);
  if (r.request_exceeds_gpu) c.push_back("request_exceeds_gpu");
  if (r.shortfall) c.push_back("short_of_memory");
  if (r.fragmentation) c.push_back("fragmentation");
  if (r.free_but_failed) c.push_back("free_but_failed");
  if (r.allocated_exceeds_total) c.push_back("allocated_exceeds_total");
  if (r.other_processes && *r.other_processes > m.total.value_or(0) / 20) c.push_back("other_processes");
  return c;
}

}  // namespace memplan::cli
