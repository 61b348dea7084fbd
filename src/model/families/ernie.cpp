// ERNIE 4.5 (Baidu, dense): Llama with a rope over interleaved pairs (GLM's rotate_half, full head), one use_bias
// key for every projection (off by default), heads of 128 and tied embeddings by default.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> ernie() {
  ModelFamily f = base("ernie4_5");
  f.all_bias_key = "use_bias";
  f.all_bias_default = false;
  f.interleaved_rope = f.tied_by_default = true;
  f.default_head_dim = 128;
  return {f};
}

}  // namespace prefix_scorer::families
