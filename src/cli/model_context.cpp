#include "cli/model_context.hpp"

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/models/context_limit.hpp"

namespace memplan::cli {

void check_trained_positions(const EstimateRequest& r, uint64_t seq) {
  if (!r.model.arch) return;
  const ContextLimit c = context_limit(*r.model.arch);
  if (seq <= c.longest) return;
  // transformers' GPT2Model / BertEmbeddings look position ids up in nn.Embedding(max_positions,
  // hidden): an id of max_positions or more is out of the table.
  if (c.learned)
    throw Error(Field::seq, group_thousands(seq) + " tokens are more than the model's " +
                                group_thousands(c.positions) + " learned positions (its position table has " +
                                group_thousands(c.positions) +
                                " rows; transformers raises IndexError past them): " + "at most " +
                                group_thousands(c.positions));
  throw Error(Field::seq, group_thousands(seq) + " tokens are more than " +
                              std::to_string(k_max_context_extension) + " times the " +
                              group_thousands(c.positions) +
                              " positions the model was trained for (max_position_embeddings): at most " +
                              group_thousands(c.longest) +
                              " (the longest published RoPE context extensions); a model extended further "
                              "states its length in its config.json (" +
                              field_ref(Field::config) + ")");
}

std::string engine_context_note(const std::string& flag, uint64_t tokens, uint64_t model_context,
                                const char* engine_rule) {
  if (!model_context || tokens <= model_context) return "";
  return flag + " " + group_thousands(tokens) + " is longer than the " + group_thousands(model_context) +
         " positions the model was trained for (max_position_embeddings): " + engine_rule;
}

}  // namespace memplan::cli
