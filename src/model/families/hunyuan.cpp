// HunYuan (Tencent), dense and MoE: Llama with q and k normed per head after the rotation (query_layernorm,
// key_layernorm), and the NTK-alpha rope (rope_type dynamic with an alpha: a fixed stretch of the base). The MoE's
// every layer routes by an fp32 softmax to experts as wide as the dense MLP (moe_topk of them, per layer where it
// is a list), beside one ungated shared MLP of that width.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> hunyuan() {
  ModelFamily dense = base("hunyuan_v1_dense");
  dense.default_eps = 1e-5;
  dense.attention_bias_on_o = dense.qk_norm = dense.qk_norm_after_rope = dense.dynamic_rope_is_ntk_alpha = true;
  dense.q_norm = "query_layernorm";
  dense.k_norm = "key_layernorm";
  ModelFamily moe = dense;
  moe.model_type = "hunyuan_v1_moe";
  ExpertTraits& e = moe.experts;
  e.present = e.dense_sized = e.always_normalized = e.routing_fp32 = e.router_fp32 = e.shared_dense_sized = true;
  e.experts_key = "num_experts";
  e.per_token_key = "moe_topk";
  e.default_experts = e.default_per_token = 1;
  name_experts(e, "mlp.gate.wg.weight");
  e.shared = "mlp.shared_mlp";
  return {dense, moe};
}

}  // namespace prefix_scorer::families
