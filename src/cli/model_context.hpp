#pragma once
// A sequence set against the context the model was trained for (max_position_embeddings, a
// preset's max_positions): refused where the model cannot run it, a note where it runs untrained.

#include <optional>
#include <string>

#include <memplan/request.hpp>

namespace memplan::cli {

// Throws Error(Field::seq) when `seq` tokens pass a learned position table (GPT-2, BERT, OPT: a
// table of max_positions rows; torch.nn.Embedding raises "IndexError: index out of range in self"
// for a position past it), or pass k_max_context_extension (32) times a rotary / ALiBi model's
// positions (context_limit.hpp). Between its positions and that, the estimate notes it.
void check_trained_positions(const EstimateRequest& r, uint64_t seq);

// `flag` (--max-model-len, --context-length) longer than the model's positions: what the engine
// does with it ("" when within them or the model's context is unknown).
std::string engine_context_note(const std::string& flag, uint64_t tokens, uint64_t model_context,
                                const char* engine_rule);

}  // namespace memplan::cli
