// LFM2: short-convolution layers (conv: out(C * conv(B * x)) over 3 taps by default) between attention layers with
// per-head q/k norms (q_layernorm, k_layernorm) and out_proj; operator_norm before the mixer, ffn_norm before the
// MLP (feed_forward.w1, w3, w2), the final norm named embedding_norm; its own config keys (norm_eps, conv_L_cache,
// full_attn_idxs, block_ff_dim and the MLP's auto-adjusted width), embeddings tied by default.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> lfm2() {
  ModelFamily f = base("lfm2");
  f.lfm2_keys = f.qk_norm = f.tied_by_default = true;
  f.eps_key = "norm_eps";
  f.sizes.intermediate = "block_ff_dim";
  f.q_norm = "q_layernorm";
  f.k_norm = "k_layernorm";
  f.o_proj = "out_proj";
  f.input_norm = "operator_norm";
  f.post_norm = "ffn_norm";
  f.final_norm = "model.embedding_norm";
  f.gated_mlp = "feed_forward";
  f.gate_proj = "w1";
  f.up_proj = "w3";
  f.down_proj = "w2";
  return {f};
}

}  // namespace prefix_scorer::families
