// The layer specs the forward walks, as each family's config makes them: windows, ropes, scales, norms and MLPs
// per layer; and the weights and cache sizes that follow from them.

#include "model/checkpoint/checkpoint_layout.h"
#include "model/checkpoint/weights.h"
#include "model/config/layer_spec.h"
#include "model/layers/mixer.h"

#include <gtest/gtest.h>

#include <string>

namespace prefix_scorer::test {
namespace {

const std::string kSizes = R"("vocab_size": 512, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16)";

ModelSpec spec_of(const std::string& model_type, const std::string& keys = "") {
  return model_spec(ModelConfig::from_json(R"({"model_type": ")" + model_type + R"(", )" + kSizes + keys + "}"));
}

// Gemma 4: full-attention layers with wider heads, their values the keys, their rope over their own width; KV-shared
// layers reading the last layer of their kind, with doubled MLPs and no cache of their own.
TEST(LayerSpec, Gemma4LayersDifferInHeadsValuesAndMlps) {
  const ModelSpec gemma4 = spec_of("gemma4_text", R"(, "sliding_window": 8, "global_head_dim": 32,
      "num_global_key_value_heads": 1, "attention_k_eq_v": true, "num_kv_shared_layers": 2, "use_double_wide_mlp": true,
      "hidden_size_per_layer_input": 8, "vocab_size_per_layer_input": 512,
      "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"])");
  ASSERT_EQ(gemma4.ropes.size(), 2u);
  EXPECT_EQ(gemma4.ropes[0].head_dim, 32);
  EXPECT_EQ(gemma4.ropes[1].head_dim, 16);
  EXPECT_EQ(gemma4.per_layer_input_size, 8);
  const int64_t kv_layer[] = {0, 1, 0, 1};
  for (int64_t i = 0; i < 4; ++i) {
    const LayerSpec& l = gemma4.layers[i];
    const bool full = i % 2 == 1, shared = i >= 2;
    EXPECT_EQ(l.attention.head_dim, full ? 32 : 16) << i;
    EXPECT_EQ(l.attention.kv_heads, full ? 1 : 2) << i;
    EXPECT_EQ(l.attention.keys_as_values, full) << i;
    EXPECT_TRUE(l.attention.value_norm && l.per_layer_input && l.scalar) << i;
    EXPECT_DOUBLE_EQ(l.attention.scale, 1.0) << i;
    EXPECT_EQ(l.attention.kv_layer, kv_layer[i]) << i;
    EXPECT_EQ(l.mlp.size, shared ? 192 : 96) << i;
    EXPECT_EQ(mixer_costs(gemma4, i, 2).cached_per_token, shared ? 0 : 2 * l.attention.kv_width()) << i;
  }
  EXPECT_FALSE(gemma4.norm.plus_one);
}

TEST(LayerSpec, AlternatingWindowsTakeTheirOwnRopeAndScale) {
  const ModelSpec gemma3 = spec_of("gemma3_text", R"(, "sliding_window": 8, "sliding_window_pattern": 2,
      "query_pre_attn_scalar": 64, "rope_local_base_freq": 500.0)");
  ASSERT_EQ(gemma3.layers.size(), 4u);
  ASSERT_EQ(gemma3.ropes.size(), 2u);
  EXPECT_DOUBLE_EQ(gemma3.ropes[1].rope.theta, 500.0);
  for (int64_t i = 0; i < 4; ++i) {
    const AttentionSpec& a = gemma3.layers[i].attention;
    const bool sliding = i % 2 == 0;  // every second layer full
    EXPECT_EQ(a.window, sliding ? 8 : 0) << i;
    EXPECT_EQ(a.rope, sliding ? 1 : 0) << i;
    EXPECT_DOUBLE_EQ(a.scale, 0.125);
    EXPECT_EQ(a.qk_norm, QkNorm::kPerHead);
    EXPECT_EQ(a.kv_layer, i);
    const LayerSpec& l = gemma3.layers[i];
    EXPECT_TRUE(l.input_norm && l.attn_out_norm && l.pre_mlp_norm && l.mlp_out_norm && !l.parallel);
  }
  EXPECT_TRUE(gemma3.norm.plus_one);
  const ModelSpec gemma2 = spec_of("gemma2");
  EXPECT_EQ(gemma2.ropes.size(), 1u);
  EXPECT_EQ(gemma2.layers[0].attention.rope, 0);
  EXPECT_DOUBLE_EQ(gemma2.layers[1].attention.softcap, 50.0);
}

TEST(LayerSpec, PositionsAndScalesByLayer) {
  const ModelSpec gpt2 = spec_of("gpt2", R"(, "scale_attn_by_inverse_layer_idx": true)");
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(gpt2.layers[i].attention.rope, -1);  // learned positions
    EXPECT_DOUBLE_EQ(gpt2.layers[i].attention.scale, 0.25 / static_cast<double>(i + 1));
    EXPECT_EQ(gpt2.layers[i].mlp.kind, MlpKind::kUngated);
  }
  EXPECT_TRUE(gpt2.norm.layer_norm);
  const ModelSpec smollm3 = spec_of("smollm3", R"(, "no_rope_layers": [1, 0, 1, 0])");
  EXPECT_EQ(smollm3.layers[0].attention.rope, 0);
  EXPECT_EQ(smollm3.layers[1].attention.rope, -1);
}

TEST(LayerSpec, NormsOfEachBlockLayout) {
  const ModelSpec phi = spec_of("phi");  // one norm feeds attention and MLP
  EXPECT_TRUE(phi.layers[0].parallel && phi.layers[0].input_norm && !phi.layers[0].pre_mlp_norm);
  const ModelSpec neox = spec_of("gpt_neox");  // parallel, each block on its own norm
  EXPECT_TRUE(neox.layers[0].parallel && neox.layers[0].pre_mlp_norm);
  const ModelSpec sequential = spec_of("gpt_neox", R"(, "use_parallel_residual": false)");
  EXPECT_FALSE(sequential.layers[0].parallel);
  const ModelSpec olmo2 = spec_of("olmo2");  // norms on the outputs only
  const LayerSpec& o = olmo2.layers[0];
  EXPECT_TRUE(!o.input_norm && o.attn_out_norm && !o.pre_mlp_norm && o.mlp_out_norm);
  EXPECT_EQ(o.attention.qk_norm, QkNorm::kFullWidth);
  EXPECT_TRUE(olmo2.norm.weight_in_fp32);
  const ModelSpec granite = spec_of("granite", R"(, "residual_multiplier": 0.5)");
  EXPECT_DOUBLE_EQ(granite.layers[3].residual_multiplier, 0.5);
}

TEST(LayerSpec, ExpertsWhereTheScheduleSaysAndDenseElsewhere) {
  const ModelSpec moe = spec_of("qwen2_moe", R"(, "num_experts": 6, "num_experts_per_tok": 2,
      "moe_intermediate_size": 32, "shared_expert_intermediate_size": 48, "decoder_sparse_step": 2,
      "mlp_only_layers": [3], "norm_topk_prob": true)");
  for (int64_t i = 0; i < 4; ++i) {
    const MlpSpec& m = moe.layers[i].mlp;
    if (i != 1) {
      EXPECT_EQ(m.kind, MlpKind::kGated) << i;
      EXPECT_EQ(m.size, 96) << i;
      continue;
    }
    EXPECT_EQ(m.kind, MlpKind::kExperts);
    EXPECT_EQ(m.size, 32);
    EXPECT_EQ(m.router.experts, 6);
    EXPECT_EQ(m.router.per_token, 2);
    EXPECT_EQ(m.router.shared_expert_size, 48);
    EXPECT_TRUE(m.router.normalize && m.router.scores == RouterScores::kSoftmax && !m.router.weights_fp32);
  }
  const MlpSpec oss = spec_of("gpt_oss", R"(, "num_local_experts": 4, "num_experts_per_tok": 2)").layers[0].mlp;
  EXPECT_TRUE(oss.router.scores == RouterScores::kSoftmaxOfChosen && oss.router.biases);
  EXPECT_EQ(oss.size, 96);  // experts as wide as the dense MLP
  EXPECT_DOUBLE_EQ(oss.swiglu_limit, 7.0);
  EXPECT_TRUE(spec_of("mixtral", R"(, "num_local_experts": 4, "num_experts_per_tok": 2)").layers[0].mlp.router.weights_fp32);
}

// DeepSeek V3's router as GLM-4.5 configures it, down to the spec, and its weight and correction bias kept fp32
// in a bf16 model (as transformers keeps them).
TEST(LayerSpec, GroupedSigmoidRouterWithCorrectionBias) {
  const std::string keys = R"(, "n_routed_experts": 8, "num_experts_per_tok": 3, "n_group": 4, "topk_group": 2,
      "n_shared_experts": 1, "moe_intermediate_size": 24, "routed_scaling_factor": 2.5, "first_k_dense_replace": 1)";
  const ModelSpec glm = spec_of("glm4_moe", keys);
  EXPECT_EQ(glm.layers[0].mlp.kind, MlpKind::kGated);
  const RouterSpec& r = glm.layers[1].mlp.router;
  EXPECT_TRUE(r.scores == RouterScores::kSigmoid && r.fp32_logits && r.correction_bias && r.normalize);
  EXPECT_EQ(r.groups, 4);
  EXPECT_EQ(r.groups_chosen, 2);
  EXPECT_EQ(r.scaling, 2.5);
  EXPECT_EQ(r.shared_expert_size, 24);
  EXPECT_FALSE(r.shared_expert_gated);
  const ModelConfig config = ModelConfig::from_json(R"({"model_type": "glm4_moe", )" + kSizes + keys + "}");
  const ModelLayout layout = model_layout(config);
  const WeightBytes bf16 = weight_bytes(config, layout, at::kBFloat16), fp32 = weight_bytes(config, layout, at::kFloat);
  int64_t router_elements = 0;
  for (const TensorSpec& t : expected_tensors(model_layout(config))) {
    if (t.name == "model.layers.1.mlp.gate.weight" || t.name == "model.layers.1.mlp.gate.e_score_correction_bias")
      router_elements += t.shape.front() * (t.shape.size() > 1 ? t.shape[1] : 1);
  }
  EXPECT_EQ(router_elements, 8 * 64 + 8);
  EXPECT_EQ(bf16.layers[1], fp32.layers[1] / 2 + router_elements * 2);  // the router's bytes stay fp32's
}

// The checkpoint's tensors are sized by each layer's spec: dense layers by the dense width, MoE layers by the
// experts', with the shared expert where the spec has one.
// Each mixer states what its layer's cache keeps, its workspace and whether cascade over a shared prefix is exact

// Llama 4: the layers that rotate norm q and k per head without weight (none under use_qk_norm false), those that do
// not scale their queries by position (in fp32, from position + 1); experts read their input times their weight.
TEST(LayerSpec, Llama4NormsRotatingLayersAndScalesTheOthersQueries) {
  const ModelSpec llama4 = spec_of("llama4_text");
  EXPECT_EQ(llama4.layers[0].attention.qk_norm, QkNorm::kUnitPerHead);
  EXPECT_TRUE(llama4.layers[0].attention.qk_norm_after_rope);
  EXPECT_FALSE(llama4.layers[0].attention.has_qk_norm_weights());
  EXPECT_FALSE(llama4.layers[0].attention.query_scaled_by_position);
  EXPECT_EQ(llama4.layers[3].attention.rope, -1);
  EXPECT_EQ(llama4.layers[3].attention.qk_norm, QkNorm::kNone);
  EXPECT_TRUE(llama4.layers[3].attention.query_scaled_by_position);
  EXPECT_DOUBLE_EQ(llama4.query_scale.beta, 0.1);
  EXPECT_EQ(llama4.query_scale.divisor, 8192);
  EXPECT_EQ(llama4.query_scale.offset, 1);
  EXPECT_TRUE(llama4.query_scale.product_in_fp32);
  EXPECT_TRUE(llama4.layers[0].mlp.router.weight_on_input);
  EXPECT_EQ(llama4.layers[0].mlp.router.shared_expert_size, 96);
  EXPECT_EQ(spec_of("llama4_text", R"(, "use_qk_norm": false)").layers[0].attention.qk_norm, QkNorm::kNone);
  const ModelSpec untuned = spec_of("llama4_text", R"(, "attn_temperature_tuning": false)");
  EXPECT_EQ(untuned.query_scale.beta, 0);
  EXPECT_FALSE(untuned.layers[3].attention.query_scaled_by_position);
  // Ministral 3's scale: every layer, from the position itself, rounded to the dtype first
  const ModelSpec ministral = spec_of("ministral3", R"(, "rope_parameters": {"rope_type": "default",
      "rope_theta": 10000.0, "llama_4_scaling_beta": 0.2, "original_max_position_embeddings": 16})");
  EXPECT_TRUE(ministral.layers[0].attention.query_scaled_by_position);
  EXPECT_EQ(ministral.query_scale.offset, 0);
  EXPECT_EQ(ministral.query_scale.divisor, 16);
  EXPECT_FALSE(ministral.query_scale.product_in_fp32);
}
// for it; the model's cascade is exact where every layer's is.
TEST(MixerCosts, EachMixerStatesWhatItKeepsAndWhetherCascadeIsExact) {
  const ModelSpec tiny = model_spec(ModelConfig::synthetic("tiny"));
  for (int64_t i = 0; i < 4; ++i) {
    const MixerCosts c = mixer_costs(tiny, i, 2);
    EXPECT_EQ(c.cached_per_token, 2 * 2 * 32) << i;  // keys and values of 2 kv heads of 32
    EXPECT_EQ(c.expanded_per_token, c.cached_per_token) << i;
    EXPECT_EQ(c.state_bytes, 0) << i;
    EXPECT_EQ(c.workspace_per_token, 0) << i;
    EXPECT_EQ(c.score_heads, 4) << i;
    EXPECT_TRUE(c.cascade_exact) << i;
  }
  EXPECT_TRUE(cascade_exact(tiny));

  // A window cuts into a prefix on its own layers; soft-capped scores on every layer.
  for (const char* name : {"tiny-gemma3", "tiny-gemma2"}) {
    const ModelSpec spec = model_spec(ModelConfig::synthetic(name));
    for (int64_t i = 0; i < static_cast<int64_t>(spec.layers.size()); ++i) {
      const AttentionSpec& a = spec.layers[i].attention;
      EXPECT_EQ(mixer_costs(spec, i, 2).cascade_exact, a.window == 0 && a.softcap == 0) << name << " " << i;
    }
    EXPECT_FALSE(cascade_exact(spec)) << name;
  }
  EXPECT_FALSE(mixer_costs(model_spec(ModelConfig::synthetic("tiny-gemma2")), 1, 2).cascade_exact);  // full, capped

  // Latent attention caches a token's latent; gathered expanded, every head's keys and values.
  const ModelSpec deepseek = model_spec(ModelConfig::synthetic("tiny-deepseek-v3"));
  const LayerSpec& d = deepseek.layers[0];
  ASSERT_EQ(d.mixer, MixerKind::kLatentAttention);
  EXPECT_EQ(mixer_costs(deepseek, 0, 2).cached_per_token, d.latent.kv_rank + d.latent.rope_dim);
  EXPECT_EQ(mixer_costs(deepseek, 0, 2).expanded_per_token,
            d.attention.heads * (d.latent.nope_dim + d.latent.rope_dim + d.latent.value_dim));

  // A Gated DeltaNet keeps a state a row, nothing a token, and has no scores; attention beside Mamba2 both.
  const ModelSpec qwen = model_spec(ModelConfig::synthetic("tiny-qwen3.5"));
  ASSERT_EQ(qwen.layers[0].mixer, MixerKind::kGatedDeltaNet);
  const MixerCosts delta = mixer_costs(qwen, 0, 2);
  const DeltaNetSpec& dn = qwen.layers[0].delta;
  EXPECT_EQ(delta.state_bytes, 4 * dn.value_heads * dn.key_dim * dn.value_dim + 2 * dn.conv_channels() * (dn.taps - 1));
  EXPECT_EQ(delta.cached_per_token, 0);
  EXPECT_EQ(delta.score_heads, 0);
  EXPECT_GT(delta.workspace_per_token, 0);
  EXPECT_TRUE(cascade_exact(qwen));
  const ModelSpec falcon = model_spec(ModelConfig::synthetic("falcon-h1-1.5b"));
  ASSERT_TRUE(falcon.layers[0].mamba_beside);
  const MixerCosts both = mixer_costs(falcon, 0, 2);
  const Mamba2Spec& m = falcon.layers[0].mamba;
  EXPECT_EQ(both.cached_per_token, 2 * falcon.layers[0].attention.kv_width());
  EXPECT_EQ(both.state_bytes, 4 * m.heads * m.head_dim * m.state_size + 2 * m.conv_channels() * (m.taps - 1));
  EXPECT_GT(both.workspace_per_token, 0);
  EXPECT_EQ(both.score_heads, falcon.layers[0].attention.heads);
}

TEST(LayerSpec, WeightsFollowTheLayerSpecs) {
  const ModelConfig config = ModelConfig::from_json(R"({"model_type": "qwen2_moe", )" + kSizes + R"(,
      "num_experts": 3, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 48,
      "decoder_sparse_step": 2})");
  int64_t dense_downs = 0, expert_downs = 0, shared = 0;
  for (const TensorSpec& t : expected_tensors(model_layout(config))) {
    if (t.name.find("experts.") != std::string::npos && t.name.find("down_proj.weight") != std::string::npos) {
      EXPECT_EQ(t.shape, (std::vector<int64_t>{64, 32})) << t.name;
      ++expert_downs;
    } else if (t.name.find("shared_expert.down_proj.weight") != std::string::npos) {
      EXPECT_EQ(t.shape, (std::vector<int64_t>{64, 48})) << t.name;
      ++shared;
    } else if (t.name.find("mlp.down_proj.weight") != std::string::npos) {
      EXPECT_EQ(t.shape, (std::vector<int64_t>{64, 96})) << t.name;
      ++dense_downs;
    } else if (t.name.find("k_proj.weight") != std::string::npos) {
      EXPECT_EQ(t.shape, (std::vector<int64_t>{32, 64})) << t.name;  // 2 KV heads of 16
    }
  }
  EXPECT_EQ(dense_downs, 2);      // layers 0 and 2
  EXPECT_EQ(expert_downs, 2 * 3); // layers 1 and 3, three experts each
  EXPECT_EQ(shared, 2);
}

}  // namespace
}  // namespace prefix_scorer::test
