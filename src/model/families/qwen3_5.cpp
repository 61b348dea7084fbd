// Qwen 3.5 and 3.6 (qwen3_5_text): Gated DeltaNet layers (linear_attention) with every full_attention_interval-th
// layer full attention; full-attention layers with per-head q/k norms, an output gate (the second half of each
// head's q_proj rows, through a sigmoid) and a quarter of each 256-wide head rotated; every RMSNorm scales by
// (1 + w) in fp32. Text positions rotate as plain rope (the three mrope sections agree on text). Its MoE, and
// Qwen3-Next, beside it.

#include "model/families/families.h"

#include <nlohmann/json.hpp>
#include "model/families/gated_deltanet_keys.h"

namespace prefix_scorer::families {
namespace {

// Qwen3_5TextConfig's Gated DeltaNet keys; its full-attention layers' output gate.
void read_qwen_deltanet(const nlohmann::json& j, ModelConfig& c) {
  c.attention_output_gate = true;
  read_gated_deltanet(j, c, {});
}

// Qwen3-Next's experts (Qwen 3.5's MoE too): num_experts of 512 wide beside a gated shared expert as wide, under
// qwen2_moe's names, `experts` of them and `per_token` a token by default.
ExpertTraits next_experts(int64_t experts, int64_t per_token) {
  ExpertTraits e;
  e.present = true;
  e.experts_key = "num_experts";
  e.default_experts = experts;
  e.default_per_token = per_token;
  e.default_size = e.default_shared_size = 512;
  name_experts(e, "mlp.gate.weight");
  return e;
}

}  // namespace

namespace {

using nlohmann::json;

// tiny's sizes with Qwen 3.5's layers: three Gated DeltaNet layers to one attention
json tiny_qwen3_5() {
  json j = shape("qwen3_5_text", 2048, 128, 384, 4, 4, 2, 32, 4096);
  j.update({{"tie_word_embeddings", true}, {"linear_num_key_heads", 2}, {"linear_num_value_heads", 4},
            {"linear_key_head_dim", 32}, {"linear_value_head_dim", 32}, {"full_attention_interval", 4}});
  return j;
}

// Qwen/Qwen3.5-9B's text model (transformers' Qwen3_5TextConfig defaults)
json qwen3_5_9b() {
  json j = shape("qwen3_5_text", 248320, 4096, 12288, 32, 16, 4, 256, 262144);
  j.update({{"tie_word_embeddings", false}, {"rms_norm_eps", 1e-6}, {"linear_num_key_heads", 16},
            {"linear_num_value_heads", 32}, {"linear_key_head_dim", 128}, {"linear_value_head_dim", 128},
            {"full_attention_interval", 4},
            {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000000.0}, {"partial_rotary_factor", 0.25}}}});
  return j;
}

// transformers' Qwen3_5MoeTextConfig defaults (Qwen3.5-35B-A3B's text model)
json qwen3_5_35b_a3b() {
  json j = shape("qwen3_5_moe_text", 248320, 2048, 512, 40, 16, 2, 256, 32768);
  j.erase("intermediate_size");  // no dense MLP
  j.update({{"tie_word_embeddings", false}, {"rms_norm_eps", 1e-6}, {"linear_num_key_heads", 16},
            {"linear_num_value_heads", 32}, {"linear_key_head_dim", 128}, {"linear_value_head_dim", 128},
            {"num_experts", 256}, {"num_experts_per_tok", 8}, {"moe_intermediate_size", 512},
            {"shared_expert_intermediate_size", 512}, {"full_attention_interval", 4},
            {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000000.0}, {"partial_rotary_factor", 0.25}}}});
  return j;
}

// transformers' Qwen3NextConfig defaults (Qwen3-Next-80B-A3B)
json qwen3_next_80b_a3b() {
  json j = shape("qwen3_next", 151936, 2048, 5632, 48, 16, 2, 256, 32768);
  j.update({{"tie_word_embeddings", false}, {"rms_norm_eps", 1e-6}, {"linear_num_key_heads", 16},
            {"linear_num_value_heads", 32}, {"linear_key_head_dim", 128}, {"linear_value_head_dim", 128},
            {"num_experts", 512}, {"num_experts_per_tok", 10}, {"moe_intermediate_size", 512},
            {"shared_expert_intermediate_size", 512}, {"norm_topk_prob", true}, {"full_attention_interval", 4},
            {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000000.0}, {"partial_rotary_factor", 0.25}}}});
  return j;
}

}  // namespace

std::vector<ModelFamily> qwen3_5() {
  ModelFamily f = base("qwen3_5_text");
  f.multimodal_wrapper = "qwen3_5";  // as released: its text model scored alone, the vision tower not loaded
  f.qk_norm = f.norm_plus_one = true;
  f.deltanet = DeltaNetLayout::kJoinedQkv;
  f.read_keys = read_qwen_deltanet;
  f.write_keys = write_gated_deltanet;
  f.default_head_dim = 256;
  f.default_partial_rotary = 0.25;
  // Qwen 3.5's MoE (qwen3_5_moe_text): every layer's MLP is experts (softmax, top-k always renormalized); no dense
  // MLP, so no intermediate_size needed.
  ModelFamily moe = f;
  moe.model_type = "qwen3_5_moe_text";
  moe.multimodal_wrapper = "qwen3_5_moe";
  moe.sizes.default_intermediate_factor = 1;  // a dense width no layer uses, when the config has none
  moe.experts = next_experts(256, 8);
  moe.experts.always_normalized = true;
  // Qwen3-Next: the same layers with the DeltaNet's projections fused by key-head group, and MoE layers as
  // qwen2_moe's (decoder_sparse_step, mlp_only_layers; norm_topk_prob by default).
  ModelFamily next = f;
  next.model_type = "qwen3_next";
  next.multimodal_wrapper = nullptr;
  next.deltanet = DeltaNetLayout::kFusedByKeyGroup;
  next.experts = next_experts(512, 10);
  next.experts.layers = MoeLayerRule::kSparseStep;
  next.experts.normalized_by_default = true;
  f.synthetic_shapes = {{"tiny-qwen3.5", tiny_qwen3_5}, {"qwen3.5-9b", qwen3_5_9b}};
  moe.synthetic_shapes = {{"qwen3.5-35b-a3b", qwen3_5_35b_a3b}};
  next.synthetic_shapes = {{"qwen3-next-80b-a3b", qwen3_next_80b_a3b}};
  return {f, moe, next};
}

}  // namespace prefix_scorer::families
