// EXAONE 4 (LG AI Research): norms on the attention's and the MLP's outputs only (as OLMo 2, but RMSNorm as
// Llama's), q and k normed per head, sliding layers (sliding_window_pattern as a period or as "LLLG") and, with a
// window, no rope on the full-attention layers.

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {

namespace {

using nlohmann::json;

// LGAI-EXAONE/EXAONE-4.0-32B: three sliding layers of 4096 to one global
json exaone4_32b() {
  json j = shape("exaone4", 102400, 5120, 27392, 64, 40, 8, 128, 131072);
  j.update({{"sliding_window", 4096}, {"sliding_window_pattern", "LLLG"}, {"rope_theta", 1000000.0},
            {"tie_word_embeddings", false}});
  return j;
}

}  // namespace

std::vector<ModelFamily> exaone4() {
  ModelFamily f = base("exaone4");
  f.default_eps = 1e-5;
  f.output_norms_only = f.qk_norm = f.rope_only_on_sliding = true;
  f.windows = {true, 4096, 4, "sliding_window_pattern", 0.0, 0.0};
  f.synthetic_shapes = {{"exaone4-32b", exaone4_32b}};
  return {f};
}

}  // namespace prefix_scorer::families
