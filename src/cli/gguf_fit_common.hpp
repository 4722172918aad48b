#pragma once
// gguf-fit's shared pieces: the plan as built from the options (Built), llama.cpp's device names,
// the llama-server and Ollama lines, and the two renderings (the plan, --check-log).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <memplan/gpu.hpp>
#include "cli/command.hpp"
#include "core/serving/llamacpp.hpp"
#include "core/serving/llamacpp_fit.hpp"
#include "core/serving/ollama_placement.hpp"

namespace memplan::cli::gguf_fit {

inline constexpr double k_mib = 1024.0 * 1024.0;

struct Built {
  LlamaCppRequest request;
  std::string model_arg;
  std::vector<GpuSpec> gpus;
  OllamaVersion ollama_version;
  uint64_t ollama_parallel = 1, ollama_overhead = 0;
  std::optional<LlamaCppFit> fit;  // --fit: what llama.cpp's own fit changed
};

// --cache-type-k/-v's llama.cpp type name (F16, Q8_0, ...); refuses what llama.cpp refuses.
std::string cache_type(const std::string& flag, const std::string& text);
double in_mib(uint64_t bytes);
std::string mib(uint64_t bytes);
std::string cache_lower(std::string t);
// The llama-server command of a plan, and the Ollama settings with the num_gpu Ollama picks.
std::string flags_of(const LlamaCppRequest& q, const LlamaCppPlan& p, const std::string& model_arg);
std::string ollama_of(const LlamaCppRequest& q, const OllamaPlacement& o, const OllamaVersion& v);
// Ollama's view of the same run (`free`: the GPUs' free memory, default what memplan counts usable).
OllamaPlacement ollama_placement(const Built& b, const std::vector<uint64_t>* free = nullptr);
// llama.cpp's device names: "CUDA0", "ROCm1", "MTL0"; a log's buffer name to its index (-1: none).
const char* device_prefix(const GpuSpec& gpu);
std::string device_name(const GpuSpec& gpu, size_t i);
long gpu_buffer_index(const std::string& dev);

// The plan as a table (with --explain) or JSON; the exit code.
int render(const Built& b, const LlamaCppPlan& p, const OutputOptions& out, Io& io);
// --check-log: the log's own settings, then the prediction against its printed buffers.
int check_log(Built b, const std::string& path, const OutputOptions& out, Io& io);

}  // namespace memplan::cli::gguf_fit
