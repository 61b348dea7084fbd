// Reading config.json (both rope spellings, older checkpoints), device and dtype names, and attention.

#include "merge_attention.h"
#include "test_support.h"

#include <gtest/gtest.h>

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
  EXPECT_EQ(hub.rope.type, "llama3");
  EXPECT_EQ(fixture.rope.type, "llama3");
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
  EXPECT_EQ(c.rope.type, "default");
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
  linear.type = "linear";
  linear.factor = 4.0;
  EXPECT_TRUE(at::allclose(inverse_frequencies(linear, 64) * 4.0, inverse_frequencies(plain, 64)));
  std::string text = kLlama3Hub;
  text.replace(text.find("\"rope_type\": \"llama3\""), 21, "\"type\": \"linear\"");
  EXPECT_EQ(ModelConfig::from_json(text).rope.type, "linear");
}

TEST(ModelConfig, UnsupportedNamesAreNamed) {
  std::string gpt2 = kLlama3Hub;
  gpt2.replace(gpt2.find("\"llama\""), 7, "\"gpt2\"");
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json(gpt2); }).find("'gpt2'"),
            std::string::npos);
  std::string yarn = kLlama3Hub;
  yarn.replace(yarn.find("\"llama3\""), 8, "\"yarn\"");
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json(yarn); }).find("'yarn'"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json("{\"model_type\": \"llama\"}"); })
                .find("vocab_size"),
            std::string::npos);
  EXPECT_THROW(ModelConfig::from_json("not json"), std::invalid_argument);
  EXPECT_THROW(ModelConfig::synthetic("llama-70b"), std::invalid_argument);
}

TEST(ModelConfig, WrittenConfigReadsBackTheSame) {
  for (const std::string& name : {"tiny", "llama-1b", "llama-8b"}) {
    const ModelConfig c = ModelConfig::synthetic(name);
    const ModelConfig back = ModelConfig::from_json(c.to_json());
    EXPECT_EQ(back.to_json(), c.to_json()) << name;
    EXPECT_TRUE(at::equal(inverse_frequencies(back.rope, back.head_dim), inverse_frequencies(c.rope, c.head_dim)));
  }
  const ModelConfig qwen3 = ModelConfig::from_file(model_dir("qwen3"));
  EXPECT_EQ(ModelConfig::from_json(qwen3.to_json()).to_json(), qwen3.to_json());
}

TEST(Devices, NamesAndPlacement) {
  EXPECT_EQ(parse_device("cpu"), c10::Device(c10::kCPU));
  EXPECT_THROW(parse_device("gpu"), std::invalid_argument);
  EXPECT_THROW(parse_device("cuda:x"), std::invalid_argument);
  if (!at::hasCUDA()) EXPECT_THROW(parse_device("cuda:0"), std::invalid_argument);
  EXPECT_EQ(parse_dtype("bf16"), at::kBFloat16);
  EXPECT_THROW(parse_dtype("int8"), std::invalid_argument);

  const c10::Device a(c10::kCPU), b(c10::kCUDA, 0);
  const auto placement = place_layers({a, b}, 5);
  const std::vector<c10::Device> expected{a, a, a, b, b};
  EXPECT_EQ(placement, expected);
  EXPECT_THROW(place_layers({a, b, a}, 2), std::invalid_argument);
}

TEST(Attention, MaskHonoursPositionsValidityAndWindow) {
  const at::Tensor pos = at::arange(6, at::kLong).unsqueeze(0);
  at::Tensor valid = at::ones({1, 6}, at::kBool);
  valid[0][2] = false;
  const at::Tensor mask = attention_mask(pos, pos, valid, 0)[0][0];
  EXPECT_TRUE(mask[5][4].item<bool>());
  EXPECT_FALSE(mask[4][5].item<bool>());  // the future
  EXPECT_FALSE(mask[5][2].item<bool>());  // padding
  const at::Tensor windowed = attention_mask(pos, pos, valid, 2)[0][0];
  EXPECT_TRUE(windowed[5][4].item<bool>());
  EXPECT_FALSE(windowed[5][3].item<bool>());
}

// Grouped-query and multi-query attention against an explicit per-head computation with repeated k and v.
class GroupedAttention : public testing::TestWithParam<int64_t> {};

TEST_P(GroupedAttention, MatchesRepeatedHeads) {
  const int64_t b = 2, heads = 4, kv_heads = GetParam(), t = 5, s = 7, d = 8;
  at::manual_seed(3);
  const at::Tensor q = at::randn({b, heads, t, d}), k = at::randn({b, kv_heads, s, d}), v = at::randn({b, kv_heads, s, d});
  const at::Tensor key_pos = at::arange(s, at::kLong).expand({b, s});
  const at::Tensor query_pos = at::arange(s - t, s, at::kLong).expand({b, t});
  at::Tensor valid = at::ones({b, s}, at::kBool);
  valid[1][0] = false;
  const at::Tensor mask = attention_mask(query_pos, key_pos, valid, 0);

  const at::Tensor kr = k.repeat_interleave(heads / kv_heads, 1), vr = v.repeat_interleave(heads / kv_heads, 1);
  const at::Tensor scores = at::matmul(q, kr.transpose(-1, -2)) / std::sqrt(static_cast<double>(d));
  const at::Tensor probs = at::softmax(scores.masked_fill(mask.logical_not(), -1e30), -1);
  const at::Tensor expected = at::matmul(probs, vr);
  EXPECT_TRUE(at::allclose(attend_reference(q, k, v, mask), expected, 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(attend(q, k, v, mask), expected, 1e-5, 1e-5));
}

TEST_P(GroupedAttention, CascadeEqualsAttentionOverTheConcatenation) {
  // Rows 0 and 2 continue prefix 0 (5 slots), row 1 prefix 1 (3 of its 5 slots real), row 3 no prefix.
  const int64_t b = 4, heads = 4, kv_heads = GetParam(), t = 3, longest = 5, d = 8;
  at::manual_seed(5);
  const at::Tensor q = at::randn({b, heads, t, d}), k = at::randn({b, kv_heads, t, d}), v = at::randn({b, kv_heads, t, d});
  const at::Tensor pk = at::randn({3, kv_heads, longest, d}), pv = at::randn({3, kv_heads, longest, d});
  const at::Tensor lengths = at::tensor({int64_t{5}, int64_t{3}, int64_t{0}}, at::kLong);
  const at::Tensor row_prefix = at::tensor({int64_t{0}, int64_t{1}, int64_t{0}, int64_t{2}}, at::kLong);
  at::Tensor own_valid = at::ones({b, t}, at::kBool);
  own_valid[2][2] = false;  // padding in row 2's suffix
  const at::Tensor own_pos = at::arange(t, at::kLong).expand({b, t}) + 10;
  const at::Tensor got = attend_cascade(q, k, v, attention_mask(own_pos, own_pos, own_valid, 0), pk, pv,
                                        prefix_groups(lengths, row_prefix, longest));

  // The same rows as one attention each over [its prefix slots, its own keys].
  const at::Tensor full_k = at::cat({pk.index_select(0, row_prefix), k}, 2);
  const at::Tensor full_v = at::cat({pv.index_select(0, row_prefix), v}, 2);
  const at::Tensor prefix_pos = at::arange(longest, at::kLong).expand({b, longest});
  const at::Tensor prefix_valid = prefix_pos < lengths.index_select(0, row_prefix).unsqueeze(1);
  const at::Tensor mask = attention_mask(own_pos, at::cat({prefix_pos, own_pos}, 1),
                                         at::cat({prefix_valid, own_valid}, 1), 0);
  const at::Tensor want = attend_reference(q, full_k, full_v, mask);
  EXPECT_LT((got - want).abs().max().item<double>(), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(KvHeads, GroupedAttention, testing::Values(4, 2, 1));

TEST(Attention, MergeRejectsMismatchedParts) {
  const at::Tensor out = at::zeros({2, 3, 8}), lse = at::zeros({2, 3, 1});
  EXPECT_NO_THROW(merge_attention(out, lse, out, lse, at::kFloat));
  EXPECT_THROW(merge_attention(out, lse, at::zeros({2, 3, 9}), lse, at::kFloat), std::invalid_argument);
  EXPECT_THROW(merge_attention(out, lse, out, at::zeros({2, 3, 2}), at::kFloat), std::invalid_argument);
  EXPECT_THROW(merge_attention(out, lse, out.to(at::kBFloat16), lse, at::kFloat), std::invalid_argument);
}

}  // namespace
}  // namespace prefix_scorer::test
