// Qwen 2 and 3, dense and MoE: biases on q, k and v (Qwen 2) or a norm over each head of q and k (Qwen 3); MoE
// layers chosen by decoder_sparse_step and mlp_only_layers, with a gated shared expert in Qwen 2's.

#include "model/families/families.h"

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
  return {qwen2, qwen3, qwen2_moe, qwen3_moe};
}

}  // namespace prefix_scorer::families
