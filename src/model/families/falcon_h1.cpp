// Falcon-H1 (TII): attention (its keys times key_multiplier before the rope) and a Mamba2 mixer side by side on each
// layer's input_layernorm, their outputs added, then the MLP (feed_forward) on pre_ff_layernorm; muP multipliers
// throughout; the final norm named final_layernorm.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> falcon_h1() {
  ModelFamily f = base("falcon_h1");
  f.mamba2 = Mamba2Keys::kFalconH1;
  f.attention_bias_on_o = f.reads_mlp_bias = true;
  f.default_eps = 1e-5;
  f.post_norm = "pre_ff_layernorm";
  f.final_norm = "model.final_layernorm";
  f.mlp_module = "feed_forward";
  return {f};
}

}  // namespace prefix_scorer::families
