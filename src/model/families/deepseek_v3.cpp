// DeepSeek V3 (and Kimi K2, its architecture under the name kimi_k2): multi-head latent attention (LatentSpec) in
// every layer, its rope over interleaved pairs unless rope_interleave is false, YaRN's mscale_all_dim on the
// scores' scale; the first first_k_dense_replace layers dense, the rest routed by DeepSeek's sigmoid router within
// the best n_group groups to experts beside shared ones. Multi-token-prediction layers (after the last) are never read.

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {

namespace {

using nlohmann::json;

// tiny's sizes with DeepSeek V3's latent attention and router, a dense first layer
json tiny_deepseek_v3() {
  json j = shape("deepseek_v3", 2048, 128, 384, 4, 4, 4, 16, 4096);
  j.update({{"tie_word_embeddings", true}, {"kv_lora_rank", 64}, {"q_lora_rank", 96}, {"qk_nope_head_dim", 32},
            {"qk_rope_head_dim", 16}, {"v_head_dim", 32}, {"n_routed_experts", 8}, {"num_experts_per_tok", 2},
            {"n_group", 4}, {"topk_group", 2}, {"moe_intermediate_size", 96}, {"first_k_dense_replace", 1}});
  return j;
}

// deepseek-ai/DeepSeek-V3 (671B), moonshotai/Kimi-K2 (1T)
json deepseek_v3_or_kimi(bool kimi) {
  json j = shape(kimi ? "kimi_k2" : "deepseek_v3", kimi ? 163840 : 129280, 7168, 18432, 61, kimi ? 64 : 128,
                 kimi ? 64 : 128, 64, kimi ? 131072 : 163840);
  j.update({{"tie_word_embeddings", false}, {"rms_norm_eps", 1e-6}, {"kv_lora_rank", 512}, {"q_lora_rank", 1536},
            {"qk_nope_head_dim", 128}, {"qk_rope_head_dim", 64}, {"v_head_dim", 128},
            {"n_routed_experts", kimi ? 384 : 256}, {"num_experts_per_tok", 8}, {"n_group", kimi ? 1 : 8},
            {"topk_group", kimi ? 1 : 4}, {"n_shared_experts", 1}, {"moe_intermediate_size", 2048},
            {"first_k_dense_replace", kimi ? 1 : 3}, {"routed_scaling_factor", kimi ? 2.827 : 2.5},
            {"rope_scaling", {{"type", "yarn"}, {"rope_theta", kimi ? 50000.0 : 10000.0},
                              {"factor", kimi ? 32.0 : 40.0}, {"mscale", 1.0}, {"mscale_all_dim", 1.0},
                              {"original_max_position_embeddings", 4096}, {"beta_fast", kimi ? 1.0 : 32.0},
                              {"beta_slow", 1.0}}}});
  return j;
}

}  // namespace

std::vector<ModelFamily> deepseek_v3() {
  ModelFamily f = base("deepseek_v3");
  f.latent = {512, 1536, 128, 64, 128};
  f.attention_bias_on_o = true;
  ExpertTraits& e = f.experts;
  deepseek_moe(e, 256, 8, 2048);
  e.default_first_dense = 3;
  e.default_groups = 8;
  e.default_groups_chosen = 4;
  e.default_scaling = 2.5;
  ModelFamily kimi = f;
  kimi.model_type = "kimi_k2";
  f.synthetic_shapes = {{"tiny-deepseek-v3", tiny_deepseek_v3},
                        {"deepseek-v3", [] { return deepseek_v3_or_kimi(false); }}};
  kimi.synthetic_shapes = {{"kimi-k2", [] { return deepseek_v3_or_kimi(true); }}};
  return {f, kimi};
}

}  // namespace prefix_scorer::families
