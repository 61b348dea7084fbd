// Seed-OSS (ByteDance): Llama with biases on q, k and v by default (attention_bias) and on o under its own key
// (attention_out_bias), heads of 128 by default.

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {

namespace {

using nlohmann::json;

// ByteDance-Seed/Seed-OSS-36B-Base
json seed_oss_36b() {
  json j = shape("seed_oss", 155136, 5120, 27648, 64, 80, 8, 128, 524288);
  j.update({{"attention_bias", true}, {"attention_out_bias", false}, {"rope_theta", 10000000.0},
            {"tie_word_embeddings", false}});
  return j;
}

}  // namespace

std::vector<ModelFamily> seed_oss() {
  ModelFamily f = base("seed_oss");
  f.attention_bias_default = f.reads_mlp_bias = true;
  f.o_bias_key = "attention_out_bias";
  f.default_head_dim = 128;
  f.synthetic_shapes = {{"seed-oss-36b", seed_oss_36b}};
  return {f};
}

}  // namespace prefix_scorer::families
