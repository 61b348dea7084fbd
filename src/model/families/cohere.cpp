// Cohere's Command R and R+ (cohere) and Command A and R7B (cohere2): attention and a gated MLP in parallel on one
// LayerNorm without bias (computed in fp32), biases on q, k, v and o under attention_bias, the rope over
// interleaved pairs (rows reordered at load), the logits times logit_scale, tied embeddings by default. Command R+
// norms q and k per head (use_qk_norm) by LayerNorms with a weight for each head. Cohere 2 has sliding layers
// (every sliding_window_pattern-th full) that alone rotate, none without a window, and heads of hidden_size over
// num_attention_heads whatever head_dim says.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> cohere() {
  ModelFamily f = base("cohere");
  f.layer_norm = f.norms_without_bias = f.norm_in_fp32 = f.parallel_block = true;
  f.interleaved_rope = f.tied_by_default = f.attention_bias_on_o = true;
  f.eps_key = "layer_norm_eps";
  f.default_eps = 1e-5;
  f.default_rope_theta = 500000.0;
  f.logit_scale_key = "logit_scale";
  f.default_logit_scale = 0.0625;
  f.qk_norm_key = "use_qk_norm";
  f.qk_norm_weight_per_head = true;
  ModelFamily two = f;
  two.model_type = "cohere2";
  two.qk_norm_key = nullptr;
  two.default_rope_theta = 10000.0;
  two.rope_only_on_sliding = two.rope_needs_window = two.head_dim_from_heads = true;
  two.windows = {true, 4096, 4, "sliding_window_pattern", 0.0, 0.0};
  return {f, two};
}

}  // namespace prefix_scorer::families
