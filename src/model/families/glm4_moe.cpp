// GLM-4.5 and GLM-4.6 (glm4_moe): DeepSeek V3's MoE under Llama-like attention (biases on q, k and v, per-head q/k
// norms under use_qk_norm, half of each head rotated by default). The first first_k_dense_replace layers are dense;
// the rest route each token by sigmoid scores plus a correction bias, within the best groups, to experts beside a
// shared one. The router and its bias stay fp32. Multi-token-prediction layers (after the last) are never read.

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {

namespace {

using nlohmann::json;

// tiny's sizes with GLM-4.5's router: a dense first layer, 8 experts in 4 groups
json tiny_glm4_moe() {
  json j = shape("glm4_moe", 2048, 128, 384, 4, 4, 2, 32, 4096);
  j.update({{"n_routed_experts", 8}, {"num_experts_per_tok", 2}, {"n_group", 4}, {"topk_group", 2},
            {"n_shared_experts", 1}, {"moe_intermediate_size", 96}, {"routed_scaling_factor", 2.5},
            {"first_k_dense_replace", 1}, {"attention_bias", true}});
  return j;
}

// zai-org/GLM-4.5-Air
json glm4_5_air() {
  json j = shape("glm4_moe", 151552, 4096, 10944, 46, 96, 8, 128, 131072);
  j.update({{"n_routed_experts", 128}, {"num_experts_per_tok", 8}, {"n_shared_experts", 1},
            {"moe_intermediate_size", 1408}, {"first_k_dense_replace", 1}, {"attention_bias", true},
            {"rope_theta", 1000000.0}, {"partial_rotary_factor", 0.5}});
  return j;
}

}  // namespace

std::vector<ModelFamily> glm4_moe() {
  ModelFamily f = base("glm4_moe");
  f.default_eps = 1e-5;
  f.qk_norm_key = "use_qk_norm";
  f.default_partial_rotary = 0.5;
  ExpertTraits& e = f.experts;
  deepseek_moe(e, 128, 8, 1408);
  e.default_first_dense = 1;
  f.synthetic_shapes = {{"tiny-glm4-moe", tiny_glm4_moe}, {"glm4.5-air", glm4_5_air}};
  return {f};
}

}  // namespace prefix_scorer::families
