// OLMo 2 and 3: norms on the attention's and the MLP's outputs only, q and k normed over the whole projection,
// RMSNorm multiplying by w in fp32; OLMo 3 makes every fourth layer full and the others sliding, each kind with
// its own rope.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> olmo() {
  ModelFamily olmo2 = base("olmo2");
  olmo2.default_eps = 1e-5;
  olmo2.attention_bias_on_o = olmo2.qk_norm_full_width = olmo2.output_norms_only = olmo2.norm_in_fp32 = true;
  ModelFamily olmo3 = olmo2;
  olmo3.model_type = "olmo3";
  olmo3.windows = {true, 4096, 4, nullptr, 0.0, 0.0};
  olmo3.sliding_rope_unscaled = true;
  return {olmo2, olmo3};
}

}  // namespace prefix_scorer::families
