// SmolLM3: Llama with layers that attend without rope (no_rope_layers), tied embeddings, rope_theta 2e6.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> smollm3() {
  ModelFamily smollm3 = base("smollm3");
  smollm3.tied_by_default = smollm3.attention_bias_on_o = smollm3.reads_mlp_bias = smollm3.nope_layers = true;
  smollm3.default_rope_theta = 2e6;
  return {smollm3};
}

}  // namespace prefix_scorer::families
