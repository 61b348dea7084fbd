// StarCoder 2: LayerNorm with biases (norm_epsilon), an ungated GELU MLP (c_fc, c_proj), use_bias on every
// projection, windows.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> starcoder2() {
  ModelFamily starcoder2 = base("starcoder2");
  starcoder2.default_activation = Activation::kGeluTanh;
  starcoder2.tied_by_default = starcoder2.always_windowed = starcoder2.layer_norm = true;
  starcoder2.default_eps = 1e-5;
  starcoder2.eps_key = "norm_epsilon";
  starcoder2.all_bias_key = "use_bias";
  starcoder2.mlp_up = "c_fc";
  starcoder2.mlp_down = "c_proj";
  return {starcoder2};
}

}  // namespace prefix_scorer::families
