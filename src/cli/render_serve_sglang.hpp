#pragma once
// memplan serve --engine sglang in words: SGLang's budget (table, markdown, JSON), its --explain
// arithmetic, the `python -m sglang.launch_server` flags and a start-up log beside the prediction.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "core/serving/sglang_budget.hpp"
#include "core/serving/sglang_log.hpp"

#include "cli/command.hpp"
#include "cli/render_serve.hpp"

namespace memplan::cli {

struct SglangServeResult {
  std::string model_id;
  std::string model_name;
  std::string model_arg;  // --model-path MODEL (serve_model_arg)
  std::string gpu_id;
  std::string gpu_name;
  SglangBudget budget;
  bool non_torch_default = false;  // --overhead not given: memplan's context model
  std::string kv_cache_dtype;      // SGLang's name, "" = auto
  std::vector<std::string> notes;
  std::optional<std::string> log_path;
  std::vector<LogCheck> checks;
};

// The checks an SGLang log allows: weights (1%), free memory before and after the weights, the
// KV tokens and the pool's GiB (5%); mem_fraction_static and context_len where the log prints them
// (the same value).
std::vector<LogCheck> check_against_sglang_log(const SglangBudget& b, const SglangLogFigures& log);
std::string sglang_flags(const SglangServeResult& r);
std::string sglang_table(const SglangServeResult& r, const OutputOptions& out);
nlohmann::json sglang_json(const SglangServeResult& r, const nlohmann::json& inputs);

}  // namespace memplan::cli
