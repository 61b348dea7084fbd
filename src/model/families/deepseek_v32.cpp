// DeepSeek V3.2 (deepseek_v32) and GLM-5 (glm_moe_dsa): DeepSeek V3's latent attention (queries always through their
// low-rank pair, the rope always over interleaved pairs) with DeepSeek Sparse Attention: an indexer in each layer
// ranks the keys and each query attends to its index_topk best. While a query sees at most index_topk keys it
// attends to all of them, which is dense attention: served so up to that length (the indexer not built, its
// weights never read), longer inputs refused by name. glm4_moe's router; the dense layers by mlp_layer_types, else
// the first first_k_dense_replace.

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {
namespace {

ModelFamily sparse_attention(const char* model_type, LatentDefaults latent) {
  ModelFamily f = base(model_type);
  f.latent = latent;
  f.latent.fixed_layout = true;  // transformers' V3.2 reads neither rope_interleave nor a null q_lora_rank
  f.attention_bias_on_o = true;
  f.default_index_topk = 2048;
  f.indexer = "self_attn.indexer.";
  ExpertTraits& e = f.experts;
  deepseek_moe(e, 256, 8, 2048);
  e.layers = MoeLayerRule::kMlpLayerTypes;
  e.default_first_dense = 3;
  e.default_scaling = 2.5;
  return f;
}

}  // namespace

namespace {

using nlohmann::json;

// deepseek-ai/DeepSeek-V3.2: DeepSeek V3's sizes, sparse attention of 2048 keys
json deepseek_v3_2() {
  json j = synthetic_shape_keys("deepseek-v3");
  j.update({{"model_type", "deepseek_v32"}, {"index_topk", 2048}});
  return j;
}

// transformers' GlmMoeDsaConfig defaults (zai-org/GLM-5)
json glm_5() {
  json j = shape("glm_moe_dsa", 154880, 6144, 12288, 78, 64, 64, 64, 202752);
  j.update({{"tie_word_embeddings", false}});
  return j;
}

}  // namespace

std::vector<ModelFamily> deepseek_v32() {
  ModelFamily deepseek = sparse_attention("deepseek_v32", {512, 1536, 128, 64, 128});
  deepseek.experts.default_groups = 8;
  deepseek.experts.default_groups_chosen = 4;
  ModelFamily glm = sparse_attention("glm_moe_dsa", {512, 2048, 192, 64, 256});
  glm.default_eps = 1e-5;
  deepseek.synthetic_shapes = {{"deepseek-v3.2", deepseek_v3_2}};
  glm.synthetic_shapes = {{"glm-5", glm_5}};
  return {deepseek, glm};
}

}  // namespace prefix_scorer::families
