#include "cli/model_context.hpp"

#include <memplan/error.hpp>
#include <memplan/quantity.hpp>
#include "core/models/arch_layout.hpp"

namespace memplan::cli {

void check_learned_positions(const EstimateRequest& r, uint64_t seq) {
  if (!r.model.arch) return;
  TransformerArch a = *r.model.arch;
  apply_layout_defaults(a);  // the family's layout (gpt2, bert: learned), as the estimate reads it
  if (a.position_embedding != "learned") return;
  const uint64_t positions = a.max_positions;
  if (!positions || seq <= positions) return;
  // transformers' GPT2Model / BertEmbeddings look position ids up in nn.Embedding(max_positions,
  // hidden): an id of max_positions or more is out of the table.
  throw Error(Field::seq, group_thousands(seq) + " tokens are more than the model's " +
                              group_thousands(positions) + " learned positions (its position table has " +
                              group_thousands(positions) +
                              " rows; transformers raises IndexError past them): " + "at most " +
                              group_thousands(positions));
}

std::string engine_context_note(const std::string& flag, uint64_t tokens, uint64_t model_context,
                                const char* engine_rule) {
  if (!model_context || tokens <= model_context) return "";
  return flag + " " + group_thousands(tokens) + " is longer than the " + group_thousands(model_context) +
         " positions the model was trained for (max_position_embeddings): " + engine_rule;
}

}  // namespace memplan::cli
