// Reading config.json: both rope spellings, older checkpoints, family flags, unsupported names, round trips.

#include "model/config/model_config.h"
#include "model/config/model_family.h"
#include "test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace prefix_scorer::test {
namespace {

const char* kLlama3Hub = R"({"model_type": "llama", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 160,
  "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
  "rope_theta": 500000.0, "rope_scaling": {"rope_type": "llama3", "factor": 32.0, "high_freq_factor": 4.0,
  "low_freq_factor": 1.0, "original_max_position_embeddings": 64}, "tie_word_embeddings": true,
  "bos_token_id": null, "rms_norm_eps": 1e-05})";

TEST(ModelConfig, HubRopeSpellingEqualsRopeParameters) {
  const ModelConfig hub = ModelConfig::from_json(kLlama3Hub);
  const ModelConfig fixture = ModelConfig::from_file(model_dir("llama3"));
  EXPECT_EQ(hub.rope.type, RopeType::kLlama3);
  EXPECT_EQ(fixture.rope.type, RopeType::kLlama3);
  EXPECT_DOUBLE_EQ(hub.rope.theta, fixture.rope.theta);
  EXPECT_TRUE(at::equal(inverse_frequencies(hub.rope, hub.head_dim),
                        inverse_frequencies(fixture.rope, fixture.head_dim)));
  EXPECT_TRUE(hub.tie_word_embeddings);
}

TEST(ModelConfig, Llama2StyleDefaults) {
  const ModelConfig c = ModelConfig::from_json(R"({"model_type": "llama", "vocab_size": 32000,
    "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
    "rope_scaling": null, "max_position_embeddings": 4096})");
  EXPECT_EQ(c.num_kv_heads, 32);  // multi-head attention when num_key_value_heads is absent
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.rope.type, RopeType::kDefault);
  EXPECT_DOUBLE_EQ(c.rope.theta, 10000.0);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_FALSE(c.qkv_bias);
}

TEST(ModelConfig, FamilyFlags) {
  EXPECT_TRUE(ModelConfig::from_file(model_dir("qwen2")).qkv_bias);
  const ModelConfig qwen3 = ModelConfig::from_file(model_dir("qwen3"));
  EXPECT_TRUE(qwen3.qk_norm);
  EXPECT_EQ(qwen3.head_dim, 32);
  EXPECT_FALSE(ModelConfig::from_file(model_dir("mistral")).tie_word_embeddings);
}

TEST(ModelConfig, LinearScalingDividesFrequencies) {
  RopeConfig plain, linear;
  linear.type = RopeType::kLinear;
  linear.factor = 4.0;
  EXPECT_TRUE(at::allclose(inverse_frequencies(linear, 64) * 4.0, inverse_frequencies(plain, 64)));
  std::string text = kLlama3Hub;
  text.replace(text.find("\"rope_type\": \"llama3\""), 21, "\"type\": \"linear\"");
  EXPECT_EQ(ModelConfig::from_json(text).rope.type, RopeType::kLinear);
}

TEST(ModelConfig, UnsupportedNamesAreNamed) {
  std::string falcon = kLlama3Hub;
  falcon.replace(falcon.find("\"llama\""), 7, "\"falcon\"");
  const std::string message = message_of<std::invalid_argument>([&] { ModelConfig::from_json(falcon); });
  EXPECT_NE(message.find("'falcon'"), std::string::npos) << message;
  EXPECT_NE(message.find("--model hf"), std::string::npos) << message;
  std::string dynamic = kLlama3Hub;
  dynamic.replace(dynamic.find("\"llama3\""), 8, "\"dynamic\"");
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json(dynamic); }).find("'dynamic'"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json("{\"model_type\": \"llama\"}"); })
                .find("vocab_size"),
            std::string::npos);
  EXPECT_THROW(ModelConfig::from_json("not json"), std::invalid_argument);
  const std::string unknown = message_of<std::invalid_argument>([] { ModelConfig::synthetic("llama-70b"); });
  EXPECT_NE(unknown.find("unknown synthetic model 'llama-70b' (known: tiny, small, llama-1b"), std::string::npos)
      << unknown;
}

TEST(ModelConfig, WrittenConfigReadsBackTheSame) {
  const std::vector<std::string> names = synthetic_shape_names();
  ASSERT_GE(names.size(), 48u);  // every family's shapes, listed by the families
  for (const std::string& name : names) {
    const ModelConfig c = ModelConfig::synthetic(name);
    const ModelConfig back = ModelConfig::from_json(c.to_json());
    EXPECT_EQ(back.to_json(), c.to_json()) << name;
    EXPECT_TRUE(at::equal(inverse_frequencies(back.rope, back.head_dim), inverse_frequencies(c.rope, c.head_dim)));
  }
  const ModelConfig qwen3 = ModelConfig::from_file(model_dir("qwen3"));
  EXPECT_EQ(ModelConfig::from_json(qwen3.to_json()).to_json(), qwen3.to_json());
}

// The hybrid shapes of released sizes have their layer mix as released.
TEST(ModelConfig, HybridShapesHaveTheirReleasedLayerMix) {
  const auto count = [](const ModelConfig& c, auto kind) {
    int64_t n = 0;
    for (int64_t i = 0; i < c.num_layers; ++i) n += kind(c, i) ? 1 : 0;
    return n;
  };
  const auto mamba = [](const ModelConfig& c, int64_t i) { return c.is_mamba(i); };
  const auto mlp_only = [](const ModelConfig& c, int64_t i) { return c.is_mlp_only(i); };
  const auto conv = [](const ModelConfig& c, int64_t i) { return c.is_short_conv(i); };
  const auto moe = [](const ModelConfig& c, int64_t i) { return c.is_moe_layer(i); };
  const ModelConfig nemotron = ModelConfig::synthetic("nemotron-h-8b");
  EXPECT_EQ(nemotron.num_layers, 52);
  EXPECT_EQ(count(nemotron, mamba), 24);
  EXPECT_EQ(count(nemotron, mlp_only), 24);
  EXPECT_EQ(count(nemotron, moe), 0);
  const ModelConfig falcon = ModelConfig::synthetic("falcon-h1-1.5b");
  EXPECT_TRUE(falcon.mamba_beside_attention);
  EXPECT_EQ(falcon.mamba_heads * falcon.mamba_head_dim, 3072);
  const ModelConfig lfm2_moe = ModelConfig::synthetic("lfm2-8b-a1b");
  EXPECT_EQ(count(lfm2_moe, conv), 18);
  EXPECT_EQ(count(lfm2_moe, moe), 22);
  EXPECT_FALSE(lfm2_moe.is_moe_layer(1));
  EXPECT_TRUE(lfm2_moe.is_moe_layer(2));
  const auto linear = [](const ModelConfig& c, int64_t i) { return c.is_linear_attention(i); };
  const ModelConfig kimi = ModelConfig::synthetic("kimi-linear-48b-a3b");  // full layers 4, 8, ..., 24, 27 (1-based)
  EXPECT_EQ(count(kimi, linear), 20);
  EXPECT_FALSE(kimi.is_linear_attention(3));
  EXPECT_FALSE(kimi.is_linear_attention(26));
  EXPECT_EQ(count(kimi, moe), 26);
  const ModelConfig ling = ModelConfig::synthetic("ling-3-flash");  // the last of every 6 full, the first 2 dense
  EXPECT_EQ(count(ling, linear), 35);
  EXPECT_FALSE(ling.is_linear_attention(5));
  EXPECT_EQ(count(ling, moe), 40);
  EXPECT_DOUBLE_EQ(ling.linear_gate_lower_bound, -5.0);
}

// Kimi Linear's config as released: its own key names and linear_attn_config's 1-based layer lists; a list naming a
// layer past the last, or leaving one unnamed, is refused by name.
TEST(ModelConfig, KimiLinearReadsItsReleasedKeys) {
  nlohmann::json j = nlohmann::json::parse(ModelConfig::synthetic("tiny-kimi-linear").to_json());
  for (const char* key : {"layer_types", "linear_num_heads", "linear_head_dim", "linear_conv_kernel_dim"}) j.erase(key);
  j["linear_attn_config"] = {{"num_heads", 2}, {"head_dim", 16}, {"short_conv_kernel_size", 3},
                             {"full_attn_layers", {2}}, {"kda_layers", {1, 3, 4}}};
  j.update({{"num_experts", 6}, {"num_experts_per_token", 3}, {"moe_renormalize", false}, {"num_expert_group", 2}});
  const ModelConfig c = ModelConfig::from_json(j.dump());
  EXPECT_EQ(c.linear_value_heads, 2);
  EXPECT_EQ(c.linear_value_head_dim, 16);
  EXPECT_EQ(c.linear_conv_taps, 3);
  EXPECT_EQ(c.linear_attention_layers, (std::vector<bool>{true, false, true, true}));
  EXPECT_EQ(c.num_experts, 6);
  EXPECT_EQ(c.experts_per_token, 3);
  EXPECT_FALSE(c.norm_topk_prob);
  EXPECT_EQ(c.expert_groups, 2);
  EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json());
  j["linear_attn_config"]["kda_layers"] = {1, 3, 5};
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json(j.dump()); })
                .find("linear_attn_config's kda_layers names layer 5 of 4 (they count from 1)"),
            std::string::npos);
  j["linear_attn_config"]["kda_layers"] = {1, 3};
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json(j.dump()); })
                .find("linear_attn_config names no kind for layer 4"),
            std::string::npos);
  j["linear_attn_config"]["num_heads"] = 0;
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json(j.dump()); })
                .find("linear attention of 0 heads of 16 with 3 taps"),
            std::string::npos);
  nlohmann::json ling = nlohmann::json::parse(ModelConfig::synthetic("tiny-ling-3").to_json());
  ling["linear_conv_kernel_dim"] = 1;
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json(ling.dump()); })
                .find("linear attention of 4 heads of 32 with 1 taps"),
            std::string::npos);
}

}  // namespace
}  // namespace prefix_scorer::test
