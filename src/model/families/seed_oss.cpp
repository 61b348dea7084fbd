// Seed-OSS (ByteDance): Llama with biases on q, k and v by default (attention_bias) and on o under its own key
// (attention_out_bias), heads of 128 by default.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> seed_oss() {
  ModelFamily f = base("seed_oss");
  f.attention_bias_default = f.reads_mlp_bias = true;
  f.o_bias_key = "attention_out_bias";
  f.default_head_dim = 128;
  return {f};
}

}  // namespace prefix_scorer::families
