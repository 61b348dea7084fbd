// ERNIE 4.5 (Baidu), dense and MoE: Llama with a rope over interleaved pairs (GLM's rotate_half, full head), one
// use_bias key for every projection (off by default; in the MoE the output layer's too), tied embeddings by
// default. The MoE routes by an fp32 softmax plus a correction bias ([1, experts]) to experts between
// moe_layer_start_index and moe_layer_end_index, every moe_layer_interval-th layer, weights renormalized (their sum
// at least moe_norm_min), beside shared experts.

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {

namespace {

using nlohmann::json;

// baidu/ERNIE-4.5-0.3B-PT
json ernie4_5_0_3b() {
  json j = shape("ernie4_5", 103424, 1024, 3072, 18, 16, 2, 64, 131072);
  j.update({{"tie_word_embeddings", true}, {"rope_theta", 500000.0}});
  return j;
}

// baidu/ERNIE-4.5-21B-A3B-PT
json ernie4_5_21b_a3b() {
  json j = shape("ernie4_5_moe", 103424, 2560, 12288, 28, 20, 4, 128, 131072);
  j.update({{"moe_num_experts", 64}, {"moe_k", 6}, {"moe_num_shared_experts", 2}, {"moe_intermediate_size", 1536},
            {"moe_layer_start_index", 1}, {"tie_word_embeddings", true}, {"rope_theta", 500000.0}});
  return j;
}

}  // namespace

std::vector<ModelFamily> ernie() {
  ModelFamily dense = base("ernie4_5");
  dense.default_eps = 1e-5;
  dense.all_bias_key = "use_bias";
  dense.all_bias_default = false;
  dense.interleaved_rope = dense.tied_by_default = true;
  dense.default_rope_theta = 500000.0;
  ModelFamily moe = dense;
  dense.default_head_dim = 128;  // the MoE's heads default to hidden_size / num_attention_heads
  moe.model_type = "ernie4_5_moe";
  moe.all_bias_on_output = true;
  ExpertTraits& e = moe.experts;
  e.present = e.always_normalized = e.router_fp32 = e.correction_bias_row = true;
  e.experts_key = "moe_num_experts";
  e.per_token_key = "moe_k";
  e.default_experts = 64;
  e.default_per_token = 6;
  e.default_size = 1536;
  e.layers = MoeLayerRule::kStartEndEvery;
  e.norm_floor_key = "moe_norm_min";
  e.shared_count_key = "moe_num_shared_experts";
  e.default_shared_count = 2;
  name_experts(e, "mlp.gate.weight");
  e.correction_bias = "mlp.moe_statics.e_score_correction_bias";
  e.correction_bias_parameter = true;
  e.shared = "mlp.shared_experts";
  dense.synthetic_shapes = {{"ernie4.5-0.3b", ernie4_5_0_3b}};
  moe.synthetic_shapes = {{"ernie4.5-21b-a3b", ernie4_5_21b_a3b}};
  return {dense, moe};
}

}  // namespace prefix_scorer::families
