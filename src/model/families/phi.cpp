// Phi-1.5 and Phi-2: attention and an ungated MLP in parallel on one LayerNorm, biases on every projection and on
// the output layer, partial rotary, its own names for the output projection and the final norm.

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {

namespace {

using nlohmann::json;

// microsoft/phi-2
json phi_2() {
  json j = shape("phi", 51200, 2560, 10240, 32, 32, 32, 80, 2048);
  j.update({{"layer_norm_eps", 1e-5}, {"partial_rotary_factor", 0.4}, {"hidden_act", "gelu_new"},
            {"tie_word_embeddings", false}});
  return j;
}

}  // namespace

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
  phi.synthetic_shapes = {{"phi-2", phi_2}};
  return {phi};
}

}  // namespace prefix_scorer::families
