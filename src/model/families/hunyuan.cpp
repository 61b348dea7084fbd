// HunYuan (Tencent), dense and MoE: Llama with q and k normed per head after the rotation (query_layernorm,
// key_layernorm), and the NTK-alpha rope (rope_type dynamic with an alpha: a fixed stretch of the base). The MoE's
// every layer routes by an fp32 softmax to experts as wide as the dense MLP (moe_topk of them, per layer where it
// is a list), beside one ungated shared MLP of that width.

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {

namespace {

using nlohmann::json;

// tencent/Hunyuan-0.5B-Instruct
json hunyuan_0_5b() {
  json j = shape("hunyuan_v1_dense", 120818, 1024, 3584, 24, 16, 8, 128, 32768);
  j.update({{"tie_word_embeddings", true},
            {"rope_scaling", {{"type", "dynamic"}, {"alpha", 1000.0}, {"factor", 1.0}}}});
  return j;
}

// tencent/Hunyuan-A13B-Instruct
json hunyuan_a13b() {
  json j = shape("hunyuan_v1_moe", 128167, 4096, 3072, 32, 32, 8, 128, 32768);
  j.update({{"num_experts", 64}, {"moe_topk", 8},
            {"rope_scaling", {{"type", "dynamic"}, {"alpha", 1000.0}, {"factor", 1.0}}}});
  return j;
}

}  // namespace

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
  dense.synthetic_shapes = {{"hunyuan-0.5b", hunyuan_0_5b}};
  moe.synthetic_shapes = {{"hunyuan-a13b", hunyuan_a13b}};
  return {dense, moe};
}

}  // namespace prefix_scorer::families
