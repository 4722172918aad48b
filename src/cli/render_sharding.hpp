#pragma once
// A multi-GPU layout in words: the ranks table, the JSON "layout" object, the --explain lines.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memplan/sharding.hpp>

#include "cli/command.hpp"

namespace memplan::cli {

// "all ranks", "pipeline stage 0 (first)", ...
std::string rank_kind_text(const RankLoad& kind, const ParallelLayout& layout);

// The arithmetic behind a layout's most-loaded GPU, each formula named with engine and version.
std::vector<std::string> sharding_explain(const ShardingResult& result);

// The "layout" object of the JSON output: the layout, its engine and every rank's load.
nlohmann::json layout_json(const ShardingResult& result);

// "Layout: 8 GPUs on 1 node, ..." and the ranks table (table or markdown).
std::string ranks_text(const ShardingResult& result, const OutputOptions& out);

}  // namespace memplan::cli
