#pragma once
// memplan serve in words: the budget (table, markdown, JSON), its --explain arithmetic, the
// `vllm serve` flags that realise it and the comparison with a start-up log (--check-log).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "core/serving/vllm_budget.hpp"
#include "core/serving/vllm_log.hpp"

#include "cli/command.hpp"
#include "cli/render_log_checks.hpp"

namespace memplan::cli {

// What the command computed, for the renderers.
struct ServeResult {
  std::string model_id;
  std::string model_name;
  std::string model_arg;  // `vllm serve MODEL` (serve_model_arg)
  std::string gpu_id;
  std::string gpu_name;
  VllmBudget budget;
  std::vector<std::string> notes;
  std::optional<std::string> log_path;
  std::vector<LogCheck> checks;
};

// The checks a log allows: weights (1%), GPU blocks, KV tokens, KV memory (5%), concurrency.
std::vector<LogCheck> check_against_log(const VllmBudget& b, const VllmLogFigures& log);
// The words the release's engine stops with when the budget does not fit (vllm_versions.hpp).
std::string vllm_refusal_text(const VllmBudget& b);
// `vllm serve MODEL ...`: the flags whose values differ from nothing the user must guess.
std::string vllm_flags(const ServeResult& r);
std::string serve_table(const ServeResult& r, const OutputOptions& out);
// --explain: every term with its arithmetic and source (render_serve_explain.cpp).
std::string serve_explain(const ServeResult& r);
nlohmann::json serve_json(const ServeResult& r, const nlohmann::json& inputs);

}  // namespace memplan::cli
