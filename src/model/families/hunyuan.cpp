// HunYuan dense (Tencent): Llama with q and k normed per head after the rotation (query_layernorm,
// key_layernorm), and the NTK-alpha rope (rope_type dynamic with an alpha: a fixed stretch of the base).

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> hunyuan() {
  ModelFamily f = base("hunyuan_v1_dense");
  f.attention_bias_on_o = f.qk_norm = f.qk_norm_after_rope = f.dynamic_rope_is_ntk_alpha = true;
  f.q_norm = "query_layernorm";
  f.k_norm = "key_layernorm";
  return {f};
}

}  // namespace prefix_scorer::families
