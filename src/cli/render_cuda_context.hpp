#pragma once
// Words the CUDA context the fit adds per GPU (core: include/memplan/cuda_context.hpp): the runtime,
// each part's arithmetic, and its JSON.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memplan/cuda_context.hpp>
#include <memplan/fit.hpp>

namespace memplan::cli {

// "CUDA 13.0, lazy module loading"
std::string cuda_runtime_text(const CudaRuntime& rt);

// "1,024 B stack x 1,024 threads x 40 SMs = 41,943,040 B local memory + 441,253,888 B driver, handles
// and lazily loaded kernels (measured on an H200) = 483,196,928 B (460.8 MiB)"
std::string cuda_context_arithmetic(const CudaContext& c);

// The --explain section: one line per fit row ("" when --overhead was given or there are no rows).
std::string cuda_context_text(const std::vector<FitRow>& fit, const EstimateRequest& r);

// A fit row's "cuda_context" object (null when --overhead was given).
nlohmann::json cuda_context_json(const FitRow& row);

}  // namespace memplan::cli
