// Phi-3 and Phi-4-mini: q, k, v fused in qkv_proj and gate, up in gate_up_proj; LongRoPE, its keys partly at the
// top level of config.json (original_max_position_embeddings, partial_rotary_factor), su and yarn its old names.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> phi3() {
  ModelFamily phi3 = base("phi3");
  phi3.default_eps = 1e-5;
  phi3.fused_projections = phi3.always_windowed = phi3.rope_keys_at_top_level = true;
  phi3.fused_qkv = "qkv_proj";
  return {phi3};
}

}  // namespace prefix_scorer::families
