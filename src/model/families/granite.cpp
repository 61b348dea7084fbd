// Granite 3: Llama with multipliers of the embeddings, the attention scores and each block's output, and a divisor
// of the logits.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> granite() {
  ModelFamily granite = base("granite");
  granite.attention_bias_on_o = granite.reads_mlp_bias = granite.reads_multipliers = true;
  return {granite};
}

}  // namespace prefix_scorer::families
