#pragma once
// Counts whose suffix means something else than parse_count's decimal one (quantity.hpp): token
// counts, where k is 1,024, and batch sizes, written in digits. Parsed by quantity.cpp's grammar.

#include <cstdint>
#include <string_view>

namespace memplan {

// A token count (sequence and context lengths, tokens per pass, token budgets): parse_count's
// grammar, but k/K is 1,024 and M is 1,048,576, as context lengths are said: 8k = 8,192 (Llama 3's
// max_position_embeddings), 32k = 32,768, 128k = 131,072 (Llama 3.1's). An exponent stays decimal
// (8e3 = 8,000); B/G/T are refused. The one rule of every token-count option.
uint64_t parse_tokens(std::string_view subject, std::string_view text, uint64_t max = UINT64_MAX);

// A batch size (sequences per step, requests at once, a ladder's batches): digits or an exponent,
// no k/M suffix, since "1k" is 1,000 as a count and 1,024 as a token count.
uint64_t parse_batch_size(std::string_view subject, std::string_view text, uint64_t max = UINT64_MAX);

}  // namespace memplan
