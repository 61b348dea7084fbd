// MiniMax-M2: Mixtral's layout (experts as wide as intermediate_size, under block_sparse_moe) routed by sigmoid
// scores plus a correction bias, weights renormalized and kept fp32; q and k normed over their full width before the
// heads split; a share of each head rotated (rotary_dim in released configs).

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {

namespace {

using nlohmann::json;

// MiniMaxAI/MiniMax-M2
json minimax_m2() {
  json j = shape("minimax_m2", 200064, 3072, 1536, 62, 48, 8, 128, 196608);
  j.update({{"num_local_experts", 256}, {"num_experts_per_tok", 8}, {"rotary_dim", 64}, {"rope_theta", 5000000.0}});
  return j;
}

}  // namespace

std::vector<ModelFamily> minimax() {
  ModelFamily f = base("minimax_m2");
  f.default_head_dim = 128;
  f.qk_norm_full_width = true;
  f.default_rope_theta = 5000000.0;
  f.rotary_dim_key = "rotary_dim";
  ExpertTraits& e = f.experts;
  e.present = e.dense_sized = e.always_normalized = e.routing_fp32 = true;
  e.scores = RouterScores::kSigmoid;
  e.default_experts = 256;
  e.default_per_token = 8;
  name_mixtral_experts(e);
  e.correction_bias = "block_sparse_moe.e_score_correction_bias";
  f.synthetic_shapes = {{"minimax-m2", minimax_m2}};
  return {f};
}

}  // namespace prefix_scorer::families
