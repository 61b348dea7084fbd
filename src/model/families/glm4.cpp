// GLM-4-0414 (glm4): Llama with sandwich norms (post_self_attn_layernorm on the attention's output,
// post_attention_layernorm before the MLP, post_mlp_layernorm on its output), gate and up in one gate_up_proj,
// biases on q, k and v (attention_bias, on by default), the first half of each head rotated over interleaved pairs,
// heads of 128 and norms' epsilon 1.5625e-7 when the config omits them.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> glm4() {
  ModelFamily f = base("glm4");
  f.sandwich_norms = f.interleaved_rope = f.attention_bias_default = true;
  f.mixer_out_norm = "post_self_attn_layernorm";
  f.sandwich_pre_mlp_norm = "post_attention_layernorm";
  f.sandwich_mlp_out_norm = "post_mlp_layernorm";
  f.gate_up_proj = "gate_up_proj";
  f.default_partial_rotary = 0.5;
  f.default_head_dim = 128;
  f.default_eps = 1.5625e-7;
  return {f};
}

}  // namespace prefix_scorer::families
