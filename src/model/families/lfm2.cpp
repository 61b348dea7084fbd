// LFM2: short-convolution layers (conv: out(C * conv(B * x)) over 3 taps by default) between attention layers with
// per-head q/k norms (q_layernorm, k_layernorm) and out_proj; operator_norm before the mixer, ffn_norm before the
// MLP (feed_forward.w1, w3, w2), the final norm named embedding_norm; its own config keys (norm_eps, conv_L_cache,
// full_attn_idxs, block_ff_dim and the MLP's auto-adjusted width), embeddings tied by default. LFM3 below.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> lfm2() {
  ModelFamily f = base("lfm2");
  f.lfm2_keys = f.lfm2_ff_keys = f.qk_norm = f.tied_by_default = true;
  f.default_eps = 1e-5;
  f.default_rope_theta = 1e6;
  f.eps_key = "norm_eps";
  f.sizes.intermediate = "block_ff_dim";
  f.q_norm = "q_layernorm";
  f.k_norm = "k_layernorm";
  f.o_proj = "out_proj";
  f.input_norm = "operator_norm";
  f.post_norm = "ffn_norm";
  f.final_norm = "model.embedding_norm";
  f.mlp_module = "feed_forward";
  f.gate_proj = "w1";
  f.up_proj = "w3";
  f.down_proj = "w2";
  // LFM2-MoE: after the first num_dense_layers (their MLP intermediate_size wide, not adjusted), experts chosen by
  // sigmoid scores plus a correction bias (expert_bias, under use_expert_bias), renormalized (their sum plus 1e-6)
  // and scaled by routed_scaling_factor.
  ModelFamily moe = f;
  moe.model_type = "lfm2_moe";
  moe.lfm2_ff_keys = false;
  moe.sizes.intermediate = "intermediate_size";
  ExpertTraits& e = moe.experts;
  e.present = e.normalized_by_default = e.scaled = true;
  e.experts_key = "num_experts";
  e.default_experts = 32;
  e.default_per_token = 4;
  e.default_size = 1792;
  e.layers = MoeLayerRule::kFirstDense;
  e.first_dense_key = "num_dense_layers";
  e.default_first_dense = 2;
  e.scores = RouterScores::kSigmoid;
  e.norm_epsilon = 1e-6;
  e.router = "feed_forward.gate.weight";
  e.gate = "feed_forward.experts.{}.w1.weight";
  e.up = "feed_forward.experts.{}.w3.weight";
  e.down = "feed_forward.experts.{}.w2.weight";
  e.correction_bias = "feed_forward.expert_bias";
  e.correction_bias_key = "use_expert_bias";
  // LFM3: LFM2's layers and names with sliding-attention layers too, Qwen 3's attention names (q_norm, k_norm, o_proj)
  // with a sigmoid gate per head (gate_proj), sandwich norms (post_operator_norm, post_ffn_norm), the MLP as wide as
  // intermediate_size, and a rope by layer type (by default: sliding layers 10,000; full ones proportional, 1e6,
  // half of each head).
  ModelFamily lfm3 = f;
  lfm3.model_type = "lfm3";
  lfm3.lfm2_ff_keys = false;
  lfm3.lfm3_keys = lfm3.attention_bias_on_o = true;
  lfm3.default_head_dim = 128;
  lfm3.sizes.intermediate = "intermediate_size";
  lfm3.q_norm = "q_norm";
  lfm3.k_norm = "k_norm";
  lfm3.o_proj = "o_proj";
  lfm3.mixer_out_norm = "post_operator_norm";
  lfm3.sandwich_pre_mlp_norm = "ffn_norm";
  lfm3.sandwich_mlp_out_norm = "post_ffn_norm";
  lfm3.default_rope_scaling =
      R"({"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}, "full_attention": {"rope_type": )"
      R"("proportional", "rope_theta": 1000000.0, "partial_rotary_factor": 0.5}})";
  return {f, moe, lfm3};
}

}  // namespace prefix_scorer::families
