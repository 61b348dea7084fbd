// Qwen 3.5 and 3.6 (qwen3_5_text): Gated DeltaNet layers (linear_attention) with every full_attention_interval-th
// layer full attention; full-attention layers with per-head q/k norms, an output gate (the second half of each
// head's q_proj rows, through a sigmoid) and a quarter of each 256-wide head rotated; every RMSNorm scales by
// (1 + w) in fp32. Text positions rotate as plain rope (the three mrope sections agree on text). Its MoE, and
// Qwen3-Next, beside it.

#include "model/families/families.h"

namespace prefix_scorer::families {
namespace {

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

std::vector<ModelFamily> qwen3_5() {
  ModelFamily f = base("qwen3_5_text");
  f.multimodal_wrapper = "qwen3_5";  // as released: its text model scored alone, the vision tower not loaded
  f.qk_norm = f.norm_plus_one = true;
  f.deltanet = DeltaNetLayout::kQwen35;
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
  next.deltanet = DeltaNetLayout::kQwen3NextFused;
  next.experts = next_experts(512, 10);
  next.experts.layers = MoeLayerRule::kSparseStep;
  next.experts.normalized_by_default = true;
  return {f, moe, next};
}

}  // namespace prefix_scorer::families
