// Llama (1 to 3.x): the base every family starts from, with o's bias from attention_bias and mlp_bias read.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> llama() {
  ModelFamily llama = base("llama");
  llama.attention_bias_on_o = llama.reads_mlp_bias = true;
  return {llama};
}

}  // namespace prefix_scorer::families
