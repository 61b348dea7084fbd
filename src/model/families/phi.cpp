// Phi-1.5 and Phi-2: attention and an ungated MLP in parallel on one LayerNorm, biases on every projection and on
// the output layer, partial rotary, its own names for the output projection and the final norm.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> phi() {
  ModelFamily phi = base("phi");
  phi.default_activation = Activation::kGeluTanh;
  phi.layer_norm = phi.parallel_block = phi.always_biased = phi.output_layer_bias = true;
  phi.default_eps = 1e-5;
  phi.eps_key = "layer_norm_eps";
  phi.mlp_up = "fc1";
  phi.mlp_down = "fc2";
  phi.o_proj = "dense";
  phi.final_norm = "model.final_layernorm";
  return {phi};
}

}  // namespace prefix_scorer::families
