// K-EXAONE (exaone_moe, LG AI Research): EXAONE 4's attention (q and k normed per head, sliding layers from
// layer_types or every sliding_window_pattern-th full, and with a window no rope on the full layers) under Llama's
// norms before attention and MLP, with DeepSeek V3's router (sigmoid scores plus a correction bias, saved as
// mlp.e_score_correction_bias) over num_experts experts beside num_shared_experts shared ones; the routed layers by
// mlp_layer_types, else all but the first first_k_dense_replace. Multi-token-prediction layers (mtp.*) never read.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> exaone_moe() {
  ModelFamily f = base("exaone_moe");
  f.qk_norm = f.rope_only_on_sliding = true;
  f.default_eps = 1e-5;
  f.windows = {true, 4096, 4, "sliding_window_pattern", 0.0, 0.0};
  ExpertTraits& e = f.experts;
  deepseek_moe(e, 64, 8, 1024);
  e.experts_key = "num_experts";
  e.shared_count_key = "num_shared_experts";
  e.layers = MoeLayerRule::kMlpLayerTypes;
  e.default_first_dense = 1;
  e.default_scaling = 2.5;
  e.correction_bias = "mlp.e_score_correction_bias";
  return {f};
}

}  // namespace prefix_scorer::families
