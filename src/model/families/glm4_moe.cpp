// GLM-4.5 and GLM-4.6 (glm4_moe): DeepSeek V3's MoE under Llama-like attention (biases on q, k and v, per-head q/k
// norms under use_qk_norm, half of each head rotated by default). The first first_k_dense_replace layers are dense;
// the rest route each token by sigmoid scores plus a correction bias, within the best groups, to experts beside a
// shared one. The router and its bias stay fp32. Multi-token-prediction layers (after the last) are never read.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> glm4_moe() {
  ModelFamily f = base("glm4_moe");
  f.default_eps = 1e-5;
  f.qk_norm_key = "use_qk_norm";
  f.default_partial_rotary = 0.5;
  ExpertTraits& e = f.experts;
  deepseek_moe(e, 128, 8, 1408);
  e.default_first_dense = 1;
  return {f};
}

}  // namespace prefix_scorer::families
