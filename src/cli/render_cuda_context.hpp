#pragma once
// Words the CUDA context the fit adds per GPU (core: include/memplan/cuda_context.hpp): the runtime,
// each part's arithmetic, and its JSON.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memplan/cuda_context.hpp>
#include <memplan/fit.hpp>

namespace memplan::cli {

// The runtime PyTorch (and llama.cpp) drive a GPU through: its vendor's. memplan's context figure is
// CUDA's (measured on an H200); on ROCm/HIP and Metal it has none of its own and that one stands in.
enum class GpuRuntime { cuda, rocm, metal };

// amd -> rocm, apple -> metal; nvidia and a GPU given by its size -> cuda.
GpuRuntime gpu_runtime(const GpuSpec& gpu);

// "CUDA", "ROCm/HIP", "Metal"
const char* runtime_name(GpuRuntime rt);

// "cuda", "rocm", "metal": the fit rows' JSON "runtime".
const char* runtime_key(GpuRuntime rt);

// For a ROCm or Metal GPU without --overhead: "ROCm/HIP: memplan has no measured figure for its
// context; the CUDA context measured on an H200 (718,077,952 B) stands in"; "" otherwise.
std::string assumed_context_text(const FitRow& row);

// Whether any of the rows runs CUDA (the breakdown's overhead is then a CUDA context).
bool any_cuda(const std::vector<FitRow>& fit);
// Whether every row does.
bool all_cuda(const std::vector<FitRow>& fit);

// "CUDA 13.0, lazy module loading"
std::string cuda_runtime_text(const CudaRuntime& rt);

// "1,024 B stack x 1,024 threads x 40 SMs = 41,943,040 B local memory + 441,253,888 B driver, handles
// and lazily loaded kernels (measured on an H200) = 483,196,928 B (460.8 MiB)"
std::string cuda_context_arithmetic(const CudaContext& c);

// The --explain section: one line per fit row ("" when --overhead was given or there are no rows).
std::string cuda_context_text(const std::vector<FitRow>& fit, const EstimateRequest& r);

// A fit row's "cuda_context" object (null when --overhead was given or the GPU does not run CUDA).
nlohmann::json cuda_context_json(const FitRow& row);

}  // namespace memplan::cli
