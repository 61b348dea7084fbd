// DeepSeek V3 (and Kimi K2, its architecture under the name kimi_k2): multi-head latent attention (LatentSpec) in
// every layer, its rope over interleaved pairs unless rope_interleave is false, YaRN's mscale_all_dim on the
// scores' scale; the first first_k_dense_replace layers dense, the rest routed by DeepSeek's sigmoid router within
// the best n_group groups to experts beside shared ones. Multi-token-prediction layers (after the last) are never read.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> deepseek_v3() {
  ModelFamily f = base("deepseek_v3");
  f.latent = {512, 1536, 128, 64, 128};
  f.attention_bias_on_o = true;
  ExpertTraits& e = f.experts;
  deepseek_moe(e, 256, 8, 2048);
  e.default_first_dense = 3;
  e.default_groups = 8;
  e.default_groups_chosen = 4;
  e.default_scaling = 2.5;
  ModelFamily kimi = f;
  kimi.model_type = "kimi_k2";
  return {f, kimi};
}

}  // namespace prefix_scorer::families
