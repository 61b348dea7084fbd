// Solar Open (solar_open, Upstage): Llama's layers, every one routed by DeepSeek V3's router (sigmoid scores plus a
// correction bias, kept fp32, within the best topk_group of n_group groups, times routed_scaling_factor) to
// n_routed_experts experts beside n_shared_experts shared ones; biases on q, k and v under attention_bias. Its config
// has no dense MLP width (intermediate_size is not a key of it).

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> solar_open() {
  ModelFamily f = base("solar_open");
  f.default_eps = 1e-5;
  f.default_head_dim = 128;
  f.default_rope_theta = 1e6;
  f.sizes.intermediate = nullptr;
  ExpertTraits& e = f.experts;
  deepseek_moe(e, 128, 8, 1280);
  e.layers = MoeLayerRule::kAll;
  return {f};
}

}  // namespace prefix_scorer::families
