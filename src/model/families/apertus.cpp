// Apertus (Swiss AI): an ungated MLP through xIELU with parameters learned per layer, per-head q/k norms, its own
// names for the two norms before attention and the MLP, Llama 3's rope with a base of 12M by default.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> apertus() {
  ModelFamily f = base("apertus");
  f.attention_bias_on_o = f.qk_norm = true;
  f.default_activation = Activation::kXielu;
  f.mlp_up = "up_proj";
  f.mlp_down = "down_proj";
  f.input_norm = "attention_layernorm";
  f.post_norm = "feedforward_layernorm";
  f.default_rope_theta = 12000000.0;
  f.default_rope_scaling =
      R"({"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192, "low_freq_factor": 1.0,
          "high_freq_factor": 4.0})";
  return {f};
}

}  // namespace prefix_scorer::families
