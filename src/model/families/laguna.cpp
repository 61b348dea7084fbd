// Poolside's Laguna (laguna): each layer's query heads its own (num_attention_heads_per_layer), q and k normed per
// head before the rotation, the attention's output times softplus (in fp32) of its own g_proj of the input, one per
// head under gating true or "per-head" (the default), else one per element; biases on q, k, v and o under
// attention_bias; sliding and full layers (layer_types; all full by default) with a rope of each type's own (full:
// base 500,000 over half of each head; sliding: 10,000 over all of it). The routed layers (mlp_layer_types; all but
// the first by default) choose by sigmoid scores of fp32 logits (soft-capped by moe_router_logit_softcapping) plus a
// correction bias, weigh by the scores renormalized, scale the experts' summed output by moe_routed_scaling_factor
// and add a shared MLP of shared_expert_intermediate_size.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> laguna() {
  ModelFamily f = base("laguna");
  f.qk_norm = f.attention_bias_on_o = f.softplus_gate = true;
  f.output_gate_proj = "g_proj";
  f.per_head_gate_key = "gating";
  f.layer_heads_key = "num_attention_heads_per_layer";
  f.refused_if_true = "moe_apply_router_weight_on_input";
  f.default_head_dim = 128;
  f.windows = {true, 512, 1, nullptr, 0.0, 0.0};
  f.default_rope_scaling =
      R"({"full_attention": {"rope_type": "default", "rope_theta": 500000.0, "partial_rotary_factor": 0.5},
          "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 1.0}})";
  ExpertTraits& e = f.experts;
  e.present = e.always_normalized = e.scaled = e.scaled_after_sum = e.correction_bias_parameter = true;
  e.shared_behind_gate = false;
  e.scores = RouterScores::kSigmoid;
  e.experts_key = "num_experts";
  e.default_experts = 256;
  e.default_per_token = 8;
  e.default_size = 512;
  e.default_shared_size = 512;
  e.layers = MoeLayerRule::kMlpLayerTypes;
  e.first_dense_key = nullptr;
  e.default_first_dense = 1;
  e.scaling_key = "moe_routed_scaling_factor";
  e.logit_softcap_key = "moe_router_logit_softcapping";
  name_experts(e, "mlp.gate.weight");
  e.correction_bias = "mlp.experts.e_score_correction_bias";
  return {f};
}

}  // namespace prefix_scorer::families
