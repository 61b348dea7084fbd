// EXAONE 4 (LG AI Research): norms on the attention's and the MLP's outputs only (as OLMo 2, but RMSNorm as
// Llama's), q and k normed per head, sliding layers (sliding_window_pattern as a period or as "LLLG") and, with a
// window, no rope on the full-attention layers.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> exaone4() {
  ModelFamily f = base("exaone4");
  f.default_eps = 1e-5;
  f.output_norms_only = f.qk_norm = f.rope_only_on_sliding = true;
  f.windows = {true, 4096, 4, "sliding_window_pattern", 0.0, 0.0};
  return {f};
}

}  // namespace prefix_scorer::families
