// StarCoder 2: LayerNorm with biases (norm_epsilon), an ungated GELU MLP (c_fc, c_proj), use_bias on every
// projection, windows.

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {

namespace {

using nlohmann::json;

// bigcode/starcoder2-3b
json starcoder2_3b() {
  json j = shape("starcoder2", 49152, 3072, 12288, 30, 24, 2, 128, 16384);
  j.update({{"norm_epsilon", 1e-5}, {"sliding_window", 4096}, {"rope_theta", 999999.4420358813},
            {"use_bias", true}, {"tie_word_embeddings", true}});
  return j;
}

}  // namespace

std::vector<ModelFamily> starcoder2() {
  ModelFamily starcoder2 = base("starcoder2");
  starcoder2.default_activation = Activation::kGeluTanh;
  starcoder2.tied_by_default = starcoder2.always_windowed = starcoder2.layer_norm = true;
  starcoder2.default_eps = 1e-5;
  starcoder2.eps_key = "norm_epsilon";
  starcoder2.all_bias_key = "use_bias";
  starcoder2.mlp_up = "c_fc";
  starcoder2.mlp_down = "c_proj";
  starcoder2.synthetic_shapes = {{"starcoder2-3b", starcoder2_3b}};
  return {starcoder2};
}

}  // namespace prefix_scorer::families
