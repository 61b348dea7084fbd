// Tencent Hy3 (hy_v3): Llama's layers with q and k normed per head before the rotation, biases on q, k, v and o
// under attention_bias and on the MLPs under mlp_bias; the routed layers by mlp_layer_types (by default all but the
// first) choose by fp32 sigmoid scores plus a correction bias (a buffer, mlp.expert_bias), weigh by the scores
// renormalized (their sum plus 1e-20) times router_scaling_factor, and add a shared MLP of num_shared_experts
// experts' widths. The router's weight stays fp32. Multi-token-prediction layers (after the last) are never read.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> hy_v3() {
  ModelFamily f = base("hy_v3");
  f.qk_norm = f.attention_bias_on_o = f.reads_mlp_bias = true;
  f.default_head_dim = 128;
  f.default_eps = 1e-5;
  f.default_rope_theta = 11158840.0;
  ExpertTraits& e = f.experts;
  deepseek_router(e);
  e.grouped = false;
  e.always_normalized = true;
  e.default_experts = 192;
  e.default_per_token = 8;
  e.default_size = 1536;
  e.layers = MoeLayerRule::kMlpLayerTypes;
  e.first_dense_key = nullptr;
  e.default_first_dense = 1;
  e.shared_count_key = "num_shared_experts";
  e.default_shared_count = 1;
  e.scaling_key = "router_scaling_factor";
  e.default_scaling = 2.826;
  name_experts(e, "mlp.router.gate.weight");
  e.correction_bias = "mlp.expert_bias";
  e.shared = "mlp.shared_mlp";
  return {f};
}

}  // namespace prefix_scorer::families
