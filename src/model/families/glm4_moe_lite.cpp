// GLM-4.7-Flash (glm4_moe_lite): DeepSeek V3's multi-head latent attention (its keys and defaults; head_dim an
// alias of qk_rope_head_dim) with glm4_moe's router and names; which layers route by mlp_layer_types (dense or
// sparse; by default all but the first). Multi-token-prediction layers (after the last) are never read.

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {

namespace {

using nlohmann::json;

// transformers' Glm4MoeLiteConfig defaults (zai-org/GLM-4.7-Flash)
json glm_4_7_flash() {
  json j = shape("glm4_moe_lite", 154880, 2048, 10240, 47, 20, 20, 64, 202752);
  j.update({{"tie_word_embeddings", false}});
  return j;
}

}  // namespace

std::vector<ModelFamily> glm4_moe_lite() {
  ModelFamily f = base("glm4_moe_lite");
  f.latent = {512, 768, 192, 64, 256};
  f.attention_bias_on_o = true;
  f.default_eps = 1e-5;
  ExpertTraits& e = f.experts;
  deepseek_moe(e, 64, 4, 1536);
  e.layers = MoeLayerRule::kMlpLayerTypes;
  e.first_dense_key = nullptr;  // its config has no first_k_dense_replace: the first layer dense
  e.default_first_dense = 1;
  e.default_scaling = 1.8;
  f.synthetic_shapes = {{"glm-4.7-flash", glm_4_7_flash}};
  return {f};
}

}  // namespace prefix_scorer::families
