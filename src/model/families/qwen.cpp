// Qwen 2 and 3, dense and MoE: biases on q, k and v (Qwen 2) or a norm over each head of q and k (Qwen 3); MoE
// layers chosen by decoder_sparse_step and mlp_only_layers, with a gated shared expert in Qwen 2's.

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {
namespace {

ExpertTraits qwen_experts(int64_t default_shared_size) {
  ExpertTraits e;
  e.present = true;
  e.layers = MoeLayerRule::kSparseStep;
  e.default_experts = 60;
  e.default_per_token = 4;
  e.default_size = 1408;
  e.default_shared_size = default_shared_size;
  name_experts(e, "mlp.gate.weight");
  return e;
}

}  // namespace

namespace {

using nlohmann::json;

// Qwen3 MoE keys: every layer a mixture with renormalized routing weights.
void qwen3_moe_keys(json& j, int64_t experts, int64_t per_token, int64_t expert_size) {
  j.update({{"model_type", "qwen3_moe"}, {"rms_norm_eps", 1e-6}, {"tie_word_embeddings", false}, {"num_experts", experts},
            {"num_experts_per_tok", per_token}, {"moe_intermediate_size", expert_size}, {"norm_topk_prob", true}});
}

// tiny's sizes as qwen3_moe: 8 experts of 96, 2 a token
json tiny_moe() {
  json j = tiny_shape("llama");
  qwen3_moe_keys(j, 8, 2, 96);
  return j;
}

// Llama's tiny shape, the default model: 4 layers of 4 heads of 32, 2 KV heads, tied
json qwen3_moe_a3b() {
  json j = shape("qwen3_moe", 151936, 2048, 6144, 48, 32, 4, 128, 40960);
  j["rope_theta"] = 1e6;
  qwen3_moe_keys(j, 128, 8, 768);
  return j;
}

}  // namespace

std::vector<ModelFamily> qwen() {
  ModelFamily qwen2 = base("qwen2");
  qwen2.qkv_bias = true;
  ModelFamily qwen3 = base("qwen3");
  qwen3.default_head_dim = 128;
  qwen3.qk_norm = true;
  ModelFamily qwen2_moe = qwen2;
  qwen2_moe.model_type = "qwen2_moe";
  qwen2_moe.experts = qwen_experts(5632);
  ModelFamily qwen3_moe = qwen3;
  qwen3_moe.model_type = "qwen3_moe";
  qwen3_moe.default_head_dim = 0;  // hidden_size / num_attention_heads, unlike Qwen 3's 128
  qwen3_moe.experts = qwen_experts(0);
  qwen3_moe.synthetic_shapes = {{"tiny-moe", tiny_moe}, {"qwen3-moe-a3b", qwen3_moe_a3b}};
  return {qwen2, qwen3, qwen2_moe, qwen3_moe};
}

}  // namespace prefix_scorer::families
