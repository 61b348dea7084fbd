// Arcee Trinity (afmoe): four norms a layer (input_layernorm and post_attention_layernorm around the attention,
// pre_mlp_layernorm and post_mlp_layernorm around the MLP; the weight applied in fp32), q and k normed per head,
// the attention's output times sigmoid of its own gate_proj of the input, sliding layers (every
// global_attn_every_n_layers-th full) that alone rotate, biases on q, k, v and o under attention_bias; embeddings
// times sqrt(hidden_size) under mup_enabled. The first num_dense_layers layers are dense; the rest choose experts by
// sigmoid scores of the router's logits (made fp32) plus an fp32 correction bias (mlp.expert_bias), weigh by the
// scores renormalized (their sum plus 1e-20) times route_scale, beside a shared MLP of num_shared_experts experts'
// widths.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> afmoe() {
  ModelFamily f = base("afmoe");
  f.qk_norm = f.attention_bias_on_o = f.norm_in_fp32 = f.sandwich_norms = f.rope_only_on_sliding = true;
  f.sandwich_pre_mlp_norm = "pre_mlp_layernorm";
  f.sandwich_mlp_out_norm = "post_mlp_layernorm";
  f.output_gate_proj = "gate_proj";
  f.sqrt_hidden_embedding_key = "mup_enabled";
  f.default_head_dim = 128;
  f.default_eps = 1e-5;
  f.windows = {true, 1024, 4, "global_attn_every_n_layers", 0.0, 0.0};
  ExpertTraits& e = f.experts;
  e.present = e.always_normalized = e.scaled = e.routing_fp32 = e.correction_bias_fp32 = true;
  e.scores = RouterScores::kSigmoid;
  e.norm_epsilon = 1e-20;
  e.experts_key = "num_experts";
  e.default_experts = 64;
  e.default_per_token = 6;
  e.default_size = 1408;
  e.layers = MoeLayerRule::kFirstDense;
  e.first_dense_key = "num_dense_layers";
  e.default_first_dense = 1;
  e.shared_count_key = "num_shared_experts";
  e.default_shared_count = 2;
  e.scaling_key = "route_scale";
  name_experts(e, "mlp.router.gate.weight");
  e.correction_bias = "mlp.expert_bias";
  e.correction_bias_parameter = true;
  e.shared = "mlp.shared_experts";
  return {f};
}

}  // namespace prefix_scorer::families
