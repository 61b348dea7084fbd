// The parsers of files from strangers, free of libtorch (they also run under sanitizers): the safetensors header
// and config.json. Every malformed input is a clear error, never a crash or a silently wrong size.

#include "model/checkpoint/safetensors_header.h"
#include "model/config/model_config.h"
#include "model/config/model_family.h"
#include "test_basics.h"

#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <cmath>
#include <set>
#include <string>

namespace prefix_scorer::test {
namespace {

// A file: the 8-byte little-endian length, the JSON header, then `data_bytes` zero bytes.
std::string safetensors_bytes(const std::string& header, size_t data_bytes) {
  std::string file(8, '\0');
  const uint64_t length = header.size();
  std::memcpy(file.data(), &length, 8);
  return file + header + std::string(data_bytes, '\0');
}

std::string header_error(const std::string& header, size_t data_bytes = 64) {
  const std::string file = safetensors_bytes(header, data_bytes);
  return message_of<std::runtime_error>([&] { parse_safetensors_header(file.data(), file.size()); });
}

TEST(SafetensorsHeader, ReadsEntriesAndSkipsMetadata) {
  const std::string file = safetensors_bytes(
      R"({"__metadata__": {"format": "pt"}, "a": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [0, 12]},
          "b": {"dtype": "I64", "shape": [], "data_offsets": [12, 20]}})",
      20);
  const SafetensorsHeader header = parse_safetensors_header(file.data(), file.size());
  ASSERT_EQ(header.tensors.size(), 2u);
  EXPECT_EQ(header.data_offset, file.size() - 20);
  EXPECT_EQ(header.tensors.at("a").dtype, "BF16");
  EXPECT_EQ(header.tensors.at("a").shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(header.tensors.at("b").begin, 12u);
  EXPECT_EQ(header.tensors.at("b").end, 20u);
}

TEST(SafetensorsHeader, MalformedFilesAreNamedErrors) {
  EXPECT_NE(message_of<std::runtime_error>([] { parse_safetensors_header("1234", 4); }).find("8-byte"),
            std::string::npos);
  const std::string long_length = safetensors_bytes("{}", 0).substr(0, 8) + "{";
  EXPECT_NE(message_of<std::runtime_error>([&] {
              std::string file = long_length;
              const uint64_t huge = ~uint64_t{0};
              std::memcpy(file.data(), &huge, 8);
              parse_safetensors_header(file.data(), file.size());
            }).find("runs past the end"),
            std::string::npos);
  EXPECT_NE(header_error("{\"a\": ").find("not valid JSON"), std::string::npos);
  EXPECT_NE(header_error("[1, 2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(header_error(R"({"a": 5})").find("'a' is not a JSON object"), std::string::npos);
  EXPECT_NE(header_error(R"({"a": {"dtype": "F32", "shape": [1]}})").find("'a' has a malformed entry"),
            std::string::npos);
  EXPECT_NE(header_error(R"({"a": {"dtype": "Q4", "shape": [1], "data_offsets": [0, 1]}})").find("'Q4'"),
            std::string::npos);
  EXPECT_NE(header_error(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [4, 0]}})").find("data_offsets"),
            std::string::npos);
  EXPECT_NE(header_error(R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})").find("8 bytes"),
            std::string::npos);
  EXPECT_NE(header_error(R"({"a": {"dtype": "F32", "shape": [16], "data_offsets": [0, 64]}})", 63).find("truncated"),
            std::string::npos);
}

TEST(SafetensorsHeader, ShapesThatWouldOverflowOrAreNegativeAreRefused) {
  // -2 x -2 x 4 bytes would be 16 bytes with a signed product; 2^62 x 8 bytes wraps to 0 in 64 bits.
  EXPECT_NE(header_error(R"({"a": {"dtype": "F32", "shape": [-2, -2], "data_offsets": [0, 16]}})").find("negative"),
            std::string::npos);
  EXPECT_NE(header_error(R"({"a": {"dtype": "F64", "shape": [4611686018427387904], "data_offsets": [0, 0]}})")
                .find("too large"),
            std::string::npos);
  // Found by fuzz_safetensors_header: offsets and dimensions written as floats were converted unchecked.
  EXPECT_NE(header_error(R"({"a": {"dtype": "I64", "shape": [], "data_offsets": [0, 4.4e25]}})")
                .find("tensor 'a': data_offsets must be an integer"),
            std::string::npos);
  EXPECT_NE(header_error(R"({"a": {"dtype": "I64", "shape": [1.5], "data_offsets": [0, 8]}})")
                .find("tensor 'a': shape must be an integer"),
            std::string::npos);
  EXPECT_NE(header_error(R"({"a": {"dtype": "I64", "shape": [], "data_offsets": [-8, 0]}})").find("bad data_offsets"),
            std::string::npos);
}

TEST(ConfigJson, MalformedConfigsAreNamedErrors) {
  const auto error = [](const std::string& text) {
    return message_of<std::invalid_argument>([&] { ModelConfig::from_json(text); });
  };
  EXPECT_NE(error("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error("[]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(error(R"({"model_type": 3})").find("'model_type'"), std::string::npos);
  EXPECT_NE(error(R"({"model_type": "llama"})").find("required field"), std::string::npos);
  EXPECT_NE(error(R"({"model_type": "llama", "vocab_size": "many"})").find("'vocab_size'"), std::string::npos);
  // Found by fuzz_config_json: a float too large for an integer field was cast, which is undefined.
  EXPECT_NE(error(R"({"model_type": "llama", "vocab_size": 2e101})").find("must be an integer"), std::string::npos);
  EXPECT_NE(error(R"({"model_type": "llama", "vocab_size": 512.5})").find("must be an integer"), std::string::npos);
  // Found by fuzz_config_json: the same in a list of layers (mlp_only_layers, no_rope_layers).
  EXPECT_NE(error(R"({"model_type": "qwen2_moe", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 128,
    "num_hidden_layers": 2, "num_attention_heads": 4, "mlp_only_layers": [1.5e56]})").find("'mlp_only_layers' must be an integer"),
            std::string::npos);
  EXPECT_NE(error(R"({"model_type": "llama", "vocab_size": 18446744073709551615})").find("out of range"),
            std::string::npos);
}

TEST(ConfigJson, AnIntegerWrittenAsAFloatIsRead) {
  const ModelConfig c = ModelConfig::from_json(R"({"model_type": "llama", "vocab_size": 512, "hidden_size": 64,
    "intermediate_size": 160, "num_hidden_layers": 2, "num_attention_heads": 4, "max_position_embeddings": 4096.0})");
  EXPECT_EQ(c.max_position_embeddings, 4096);
}

const char* kGemma2 = R"({"model_type": "gemma2", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 128,
  "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16})";

std::string with(const char* base, const std::string& extra) {
  std::string text = base;
  return text.substr(0, text.size() - 1) + ", " + extra + "}";
}

TEST(ConfigJson, GemmaFamiliesTakeTransformersDefaults) {
  const ModelConfig g2 = ModelConfig::from_json(kGemma2);
  EXPECT_EQ(g2.activation, Activation::kGeluTanh);
  EXPECT_TRUE(g2.norm_plus_one && g2.scale_embeddings && g2.sandwich_norms && g2.tie_word_embeddings);
  EXPECT_EQ(g2.query_pre_attn_scalar, 256);
  EXPECT_EQ(g2.attn_softcap, 50);
  EXPECT_EQ(g2.final_softcap, 30);
  EXPECT_EQ(g2.sliding_window, 4096);
  constexpr LayerKind kSliding = LayerKind::kSlidingAttention, kFull = LayerKind::kFullAttention;
  EXPECT_EQ(g2.layer_kinds, (std::vector<LayerKind>{kSliding, kFull, kSliding, kFull}));
  EXPECT_TRUE(g2.has_window());  // cascade gathers (layers/mixer.h)
  // null means none, where absent means the default; sliding layers without a window are refused (transformers'
  // sliding mask needs one)
  const ModelConfig uncapped =
      ModelConfig::from_json(with(kGemma2, R"("attn_logit_softcapping": null, "final_logit_softcapping": null)"));
  EXPECT_EQ(uncapped.attn_softcap, 0);
  EXPECT_EQ(uncapped.final_softcap, 0);
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json(with(kGemma2, R"("sliding_window": null)")); })
                .find("sliding_window null"),
            std::string::npos);

  const ModelConfig gemma = ModelConfig::from_json(R"({"model_type": "gemma", "vocab_size": 512, "hidden_size": 64,
    "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "hidden_act": "gelu"})");
  EXPECT_EQ(gemma.activation, Activation::kGeluTanh);  // gemma's "gelu" means the tanh approximation
  EXPECT_EQ(gemma.head_dim, 256);                     // gemma's default, not hidden_size / heads
  EXPECT_FALSE(gemma.has_window());
  EXPECT_EQ(gemma.attn_softcap, 0);
}

TEST(ConfigJson, Gemma3ReadsBothRopeSpellings) {
  const char* base = R"({"model_type": "gemma3_text", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 128,
    "num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16})";
  const ModelConfig hub = ModelConfig::from_json(with(base, R"("rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
    "rope_scaling": {"rope_type": "linear", "factor": 8.0})"));
  const ModelConfig v5 = ModelConfig::from_json(with(base, R"("rope_parameters": {
    "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
    "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}})"));
  for (const ModelConfig* c : {&hub, &v5}) {
    EXPECT_EQ(c->rope.type, RopeType::kLinear);
    EXPECT_EQ(c->rope.factor, 8.0);
    EXPECT_EQ(c->rope.theta, 1e6);
    ASSERT_TRUE(c->sliding_rope.has_value());
    EXPECT_EQ(c->sliding_rope->type, RopeType::kDefault);
    EXPECT_EQ(c->sliding_rope->theta, 1e4);
    EXPECT_EQ(c->layer_kinds, (std::vector<LayerKind>{LayerKind::kSlidingAttention, LayerKind::kSlidingAttention,
                                                       LayerKind::kSlidingAttention, LayerKind::kSlidingAttention,
                                                       LayerKind::kSlidingAttention, LayerKind::kFullAttention}));  // every sixth is full
    EXPECT_TRUE(c->qk_norm);
    EXPECT_EQ(c->attn_softcap, 0);
  }
  EXPECT_EQ(ModelConfig::from_json(v5.to_json()).to_json(), v5.to_json());
}

TEST(ConfigJson, Olmo2AndGraniteTraits) {
  const char* base = R"({"vocab_size": 512, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
    "num_attention_heads": 4, "model_type": )";
  const ModelConfig olmo2 = ModelConfig::from_json(std::string(base) + R"("olmo2"})");
  EXPECT_TRUE(olmo2.qk_norm_full_width && olmo2.output_norms_only && olmo2.norm_in_fp32);
  EXPECT_FALSE(olmo2.qk_norm || olmo2.norm_plus_one || olmo2.tie_word_embeddings);
  const ModelConfig granite = ModelConfig::from_json(std::string(base) + R"("granite", "embedding_multiplier": 12.0,
    "residual_multiplier": 0.22, "attention_multiplier": 0.0078125, "logits_scaling": 8.0})");
  EXPECT_EQ(granite.embedding_multiplier, 12.0);
  EXPECT_EQ(granite.residual_multiplier, 0.22);
  EXPECT_EQ(granite.attention_scale(), 0.0078125);
  EXPECT_EQ(granite.logits_scaling, 8.0);
  EXPECT_FALSE(granite.has_window());  // cascade takes the scale
  EXPECT_EQ(granite.attn_softcap, 0);
  EXPECT_EQ(ModelConfig::from_json(std::string(base) + R"("granite"})").attention_scale(), 1.0);  // transformers' default
  EXPECT_EQ(ModelConfig::from_json(granite.to_json()).to_json(), granite.to_json());
}

TEST(ConfigJson, MixtureOfExpertsKeys) {
  const char* base = R"({"vocab_size": 512, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 2, "model_type": )";
  const ModelConfig mixtral = ModelConfig::from_json(std::string(base) + R"("mixtral", "num_local_experts": 8})");
  EXPECT_EQ(mixtral.num_experts, 8);
  EXPECT_EQ(mixtral.experts_per_token, 2);
  EXPECT_EQ(mixtral.moe_intermediate_size, 128);  // mixtral's experts are intermediate_size wide
  EXPECT_TRUE(mixtral.norm_topk_prob);             // and always renormalized
  EXPECT_TRUE(mixtral.is_moe_layer(3));
  const ModelConfig qwen2 = ModelConfig::from_json(std::string(base) + R"("qwen2_moe", "num_experts": 6,
    "num_experts_per_tok": 2, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 48,
    "decoder_sparse_step": 2, "mlp_only_layers": [3]})");
  EXPECT_FALSE(qwen2.norm_topk_prob);
  EXPECT_EQ(qwen2.shared_expert_intermediate_size, 48);
  EXPECT_TRUE(qwen2.qkv_bias);
  // (i + 1) % step == 0 and i not in mlp_only_layers: layers 1 only
  EXPECT_EQ(qwen2.moe_layers, (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(ModelConfig::from_json(qwen2.to_json()).to_json(), qwen2.to_json());
  const ModelConfig qwen3 = ModelConfig::from_json(std::string(base) + R"("qwen3_moe", "num_experts": 8,
    "num_experts_per_tok": 3, "moe_intermediate_size": 32, "norm_topk_prob": true})");
  EXPECT_TRUE(qwen3.qk_norm && qwen3.norm_topk_prob);
  EXPECT_EQ(qwen3.shared_expert_intermediate_size, 0);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(std::string(base) + R"("qwen3_moe", "num_experts": 2, "num_experts_per_tok": 3})");
            }).find("3 experts per token of 2 experts"),
            std::string::npos);
}

// Apertus 1.5's pruned output layer: read, written back, never tied, never past the vocabulary.
TEST(ConfigJson, PrunedOutputLayer) {
  const char* base = R"({"vocab_size": 512, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "model_type": "apertus1p5_text", )";
  const ModelConfig pruned = ModelConfig::from_json(std::string(base) + R"("output_vocab_size": 500})");
  EXPECT_EQ(pruned.output_vocab(), 500);
  EXPECT_EQ(ModelConfig::from_json(pruned.to_json()).to_json(), pruned.to_json());
  EXPECT_EQ(ModelConfig::from_json(std::string(base) + R"("output_vocab_size": null})").output_vocab(), 512);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(std::string(base) + R"("output_vocab_size": 600})");
            }).find("output_vocab_size 600 must be in [1, vocab_size 512]"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(std::string(base) + R"("output_vocab_size": 500, "tie_word_embeddings": true})");
            }).find("tied to the embeddings"),
            std::string::npos);
}

// Qwen 3.5's Gated DeltaNet layers: every full_attention_interval-th layer full by default, layer_types otherwise;
// left out of the supported types until the engine caches their state.
TEST(ConfigJson, GatedDeltaNetLayers) {
  const char* base = R"({"vocab_size": 512, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 8,
    "num_attention_heads": 4, "num_key_value_heads": 2, "model_type": "qwen3_5_text", "linear_num_key_heads": 2,
    "linear_num_value_heads": 4, "linear_key_head_dim": 12, "linear_value_head_dim": 10)";
  const ModelConfig qwen = ModelConfig::from_json(std::string(base) + "}");
  EXPECT_EQ(qwen.linear_attention_layers,
            (std::vector<bool>{true, true, true, false, true, true, true, false}));  // interval 4
  EXPECT_EQ(qwen.head_dim, 256);
  EXPECT_EQ(qwen.rope.partial_rotary_factor, 0.25);
  EXPECT_TRUE(qwen.attention_output_gate && qwen.norm_plus_one && qwen.qk_norm);
  EXPECT_EQ(qwen.linear_conv_taps, 4);
  EXPECT_EQ(ModelConfig::from_json(qwen.to_json()).to_json(), qwen.to_json());
  const ModelConfig every_other = ModelConfig::from_json(std::string(base) + R"(, "full_attention_interval": 2})");
  EXPECT_EQ(every_other.linear_attention_layers,
            (std::vector<bool>{true, false, true, false, true, false, true, false}));
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(std::string(base) + R"(, "layer_types": ["linear_attention", "mamba"]})");
            }).find("layer type 'mamba'"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(std::string(base) + R"(, "linear_num_value_heads": 3})");
            }).find("value heads a multiple of key heads"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(std::string(base) + R"(, "full_attention_interval": 0})");
            }).find("full_attention_interval must be >= 1"),
            std::string::npos);
  const auto types = supported_model_types();
  EXPECT_NE(std::find(types.begin(), types.end(), "qwen3_5_text"), types.end());
}

// OLMo hybrid as released: no rope (rope_theta null), the DeltaNet's sizes from the attention's (keys 3/4 of the
// hidden width over the heads, values twice as wide), beta doubled, every fourth layer attention.
TEST(ConfigJson, OlmoHybridAsReleased) {
  const ModelConfig c = ModelConfig::from_json(R"({"model_type": "olmo_hybrid", "vocab_size": 512, "hidden_size": 64,
      "intermediate_size": 128, "num_hidden_layers": 4, "num_attention_heads": 4,
      "rope_parameters": {"rope_type": "default", "rope_theta": null}})");
  EXPECT_EQ(c.rope_layers, std::vector<bool>(4, false));
  EXPECT_EQ(c.linear_key_heads, 4);
  EXPECT_EQ(c.linear_key_head_dim, 12);
  EXPECT_EQ(c.linear_value_head_dim, 24);
  EXPECT_EQ(c.linear_beta_scale, 2);
  EXPECT_EQ(c.linear_attention_layers, (std::vector<bool>{true, true, true, false}));
  EXPECT_FALSE(c.attention_output_gate);
  EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json());
  const ModelConfig rotated = ModelConfig::from_json(R"({"model_type": "olmo_hybrid", "vocab_size": 512,
      "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
      "linear_allow_neg_eigval": false})");
  EXPECT_TRUE(rotated.rope_layers.empty());
  EXPECT_EQ(rotated.linear_beta_scale, 1);
  EXPECT_EQ(rotated.linear_attention_layers, (std::vector<bool>{true, false}));  // the last one attention
}

// LFM2 as released: conv layers all but full_attn_idxs, tie_embedding over tie_word_embeddings, block_ff_dim for
// the MLP, whose width is adjusted as Lfm2MLP adjusts it (2/3, times the multiplier, rounded up).
TEST(ConfigJson, Lfm2AsReleased) {
  const ModelConfig c = ModelConfig::from_json(R"({"model_type": "lfm2", "vocab_size": 512, "hidden_size": 64,
      "block_ff_dim": 150, "block_ffn_dim_multiplier": 1.5, "block_multiple_of": 16, "num_hidden_layers": 4,
      "num_attention_heads": 4, "full_attn_idxs": [1, 3], "tie_embedding": false, "conv_L_cache": 3, "norm_eps": 1e-5})");
  EXPECT_EQ(c.short_conv_layers, (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(c.intermediate_size, 160);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_EQ(c.short_conv_taps, 3);
  EXPECT_EQ(c.rms_norm_eps, 1e-5);
  EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json());
  const ModelConfig plain = ModelConfig::from_json(R"({"model_type": "lfm2", "vocab_size": 512, "hidden_size": 64,
      "intermediate_size": 150, "num_hidden_layers": 2, "num_attention_heads": 4})");
  EXPECT_EQ(plain.short_conv_layers, (std::vector<bool>{false, false}));  // all attention without full_attn_idxs
  EXPECT_EQ(plain.intermediate_size, 256);  // 2/3 of 150, rounded up to block_multiple_of's default, as transformers
  EXPECT_TRUE(plain.tie_word_embeddings);
  EXPECT_NE(message_of<std::invalid_argument>([] {
              ModelConfig::from_json(R"({"model_type": "lfm2", "vocab_size": 512, "hidden_size": 64,
                  "intermediate_size": 150, "num_hidden_layers": 2, "num_attention_heads": 4, "conv_L_cache": 1})");
            }).find("conv_L_cache must be >= 2"),
            std::string::npos);
  const std::string sizes = R"("model_type": "lfm2", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 150,
      "num_hidden_layers": 2, "num_attention_heads": 4)";
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json("{" + sizes + R"(, "full_attn_idxs": [2]})"); })
                .find("full_attn_idxs names layer 2 of 2"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json("{" + sizes + R"(, "layer_types": ["conv", "mamba"]})");
            }).find("layer type 'mamba' (supported here: conv, full_attention)"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json("{" + sizes + R"(, "block_multiple_of": 0})"); })
                .find("block_multiple_of must be >= 1, got 0"),
            std::string::npos);
}

// LFM3 as Lfm3Config reads it: its default layers (conv, conv, full, conv, sliding, ...), 7 taps, windows of 256, a
// rope by layer type (proportional over half of each head on full layers), sandwich norms and head gates on unless
// turned off, tie_embedding no alias (its config skips LFM2's post-init that reads it).
TEST(ConfigJson, Lfm3Defaults) {
  const std::string sizes = R"("model_type": "lfm3", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 96,
      "num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16)";
  const ModelConfig c = ModelConfig::from_json("{" + sizes + R"(, "tie_embedding": false})");
  EXPECT_EQ(c.short_conv_layers, (std::vector<bool>{true, true, false, true, false, true}));
  EXPECT_EQ(c.layer_window(2), 0);
  EXPECT_EQ(c.layer_window(4), 256);
  EXPECT_EQ(c.short_conv_taps, 7);
  EXPECT_EQ(c.rope.type, RopeType::kProportional);
  EXPECT_EQ(c.rope.theta, 1e6);
  EXPECT_EQ(c.rope.partial_rotary_factor, 0.5);
  ASSERT_TRUE(c.sliding_rope.has_value());
  EXPECT_EQ(c.sliding_rope->theta, 10000.0);
  EXPECT_TRUE(c.sandwich_norms && c.attention_head_gate && c.tie_word_embeddings);
  EXPECT_EQ(c.rms_norm_eps, 1e-5);
  EXPECT_TRUE(ModelConfig::from_json("{" + sizes + R"(, "attention_bias": true})").o_bias);  // on all four
  EXPECT_EQ(c.intermediate_size, 96);  // not adjusted
  EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json());
  const ModelConfig plain = ModelConfig::from_json("{" + sizes + R"(, "use_sandwich_norm": false,
      "use_attention_gate": false, "layer_types": ["conv", "conv", "full_attention", "conv", "full_attention", "conv"]})");
  EXPECT_FALSE(plain.sandwich_norms || plain.attention_head_gate);
  EXPECT_EQ(plain.layer_window(4), 0);
  EXPECT_EQ(ModelConfig::from_json(plain.to_json()).to_json(), plain.to_json());
  auto refusal = [&](const std::string& more) {
    return message_of<std::invalid_argument>([&] { ModelConfig::from_json("{" + sizes + ", " + more + "}"); });
  };
  EXPECT_NE(refusal(R"("layer_types": ["conv", "mamba", "conv", "conv", "conv", "conv"])")
                .find("layer type 'mamba' (supported here: conv, full_attention, sliding_attention)"),
            std::string::npos);
  EXPECT_NE(refusal(R"("layer_types": ["conv"])").find("layer_types has 1 entries for 6 layers"), std::string::npos);
  EXPECT_NE(refusal(R"("sliding_window": -2)").find("sliding_window must be >= 0, got -2"), std::string::npos);
}

// LFM2-MoE: the dense layers in front (num_dense_layers), their MLP as wide as intermediate_size (not adjusted), a
// correction bias only under use_expert_bias.
TEST(ConfigJson, Lfm2MoeKeys) {
  const std::string base = R"({"model_type": "lfm2_moe", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 150,
      "num_hidden_layers": 3, "num_attention_heads": 4, "layer_types": ["conv", "full_attention", "conv"],
      "num_dense_layers": 1, "num_experts": 6, "moe_intermediate_size": 24)";
  const ModelConfig c = ModelConfig::from_json(base + "}");
  EXPECT_EQ(c.intermediate_size, 150);
  EXPECT_EQ(c.moe_layers, (std::vector<bool>{false, true, true}));
  EXPECT_TRUE(c.expert_correction_bias);
  EXPECT_EQ(c.router_scores, RouterScores::kSigmoid);
  EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json());
  EXPECT_FALSE(ModelConfig::from_json(base + R"(, "use_expert_bias": false})").expert_correction_bias);
}

// Granite 4 as released: mamba and attention layer types (as transformers 5 saves them too), the Mamba2 sizes with
// mamba_d_head "auto", no rope unless position_embedding_type says rope, the shared MLP beside the experts or alone.
TEST(ConfigJson, GraniteHybridAsReleased) {
  const std::string sizes = R"("model_type": "granitemoehybrid", "vocab_size": 512, "hidden_size": 64,
      "intermediate_size": 24, "shared_intermediate_size": 40, "num_hidden_layers": 3, "num_attention_heads": 4,
      "mamba_n_heads": 8, "mamba_n_groups": 2, "mamba_d_state": 12, "mamba_d_head": "auto", "mamba_d_conv": 4,
      "mamba_expand": 2, "mamba_chunk_size": 16, "position_embedding_type": "nope")";
  const ModelConfig c = ModelConfig::from_json("{" + sizes + R"(, "layer_types": ["mamba", "attention", "mamba"]})");
  EXPECT_EQ(c.mamba_layers, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(c.mamba_head_dim, 16);
  EXPECT_EQ(c.mamba_state_size, 12);
  EXPECT_TRUE(c.mamba_conv_bias);
  EXPECT_FALSE(c.mamba_proj_bias);
  EXPECT_EQ(c.mamba_dt_min, 0);
  EXPECT_EQ(c.mamba_dt_max, 0);  // no upper bound
  EXPECT_EQ(c.num_experts, 8);
  EXPECT_EQ(c.moe_intermediate_size, 24);
  EXPECT_EQ(c.shared_expert_intermediate_size, 40);
  EXPECT_EQ(c.router_scores, RouterScores::kFp32SoftmaxOfChosen);
  EXPECT_EQ(c.rope_layers, (std::vector<bool>{false, false, false}));
  EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json());
  const ModelConfig saved = ModelConfig::from_json(
      "{" + sizes + R"(, "layer_types": ["linear_attention", "full_attention", "linear_attention"]})");
  EXPECT_EQ(saved.mamba_layers, c.mamba_layers);
  const ModelConfig dense = ModelConfig::from_json(
      "{" + sizes + R"(, "num_local_experts": 0, "position_embedding_type": "rope"})");
  EXPECT_EQ(dense.mamba_layers, (std::vector<bool>{true, true, true}));  // all mamba without layer_types
  EXPECT_EQ(dense.num_experts, 0);
  EXPECT_EQ(dense.intermediate_size, 40);  // the shared MLP alone
  EXPECT_TRUE(dense.rope_layers.empty());
  EXPECT_EQ(ModelConfig::from_json(dense.to_json()).to_json(), dense.to_json());
  auto refusal = [&](const std::string& more) {
    return message_of<std::invalid_argument>([&] { ModelConfig::from_json("{" + sizes + ", " + more + "}"); });
  };
  EXPECT_NE(refusal(R"("layer_types": ["mamba", "conv", "mamba"])").find("layer type 'conv'"), std::string::npos);
  EXPECT_NE(refusal(R"("layer_types": ["mamba"])").find("layer_types has 1 entries for 3 layers"), std::string::npos);
  EXPECT_NE(refusal(R"("mamba_d_head": 12)").find("mamba_n_heads 8 times mamba_d_head 12 must be"), std::string::npos);
  EXPECT_NE(refusal(R"("mamba_n_groups": 3)").find("heads a multiple of groups"), std::string::npos);
  EXPECT_NE(refusal(R"("mamba_d_conv": 1)").find("at least 2 taps"), std::string::npos);
  EXPECT_NE(refusal(R"("hidden_act": "gelu")").find("Mamba2's convolution takes SiLU here, not gelu"), std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] {  // a clear error, not a length_error from sizing the layers
              ModelConfig::from_json("{" + sizes + R"(, "num_hidden_layers": -1})");
            }).find("for -1 layers"),
            std::string::npos);
}

// Nemotron-H as released: the layers from hybrid_override_pattern (whatever num_hidden_layers says), or from
// layers_block_type as transformers 5 saves them; the Mamba2 keys under their older names too; time_step_limit
// unread (its bare Infinity still parses), time_step_min the clamp; no rope, no attention biases, never tied; the
// expert layers with their latent width and shared MLP.
TEST(ConfigJson, NemotronHAsReleased) {
  const std::string sizes = R"("model_type": "nemotron_h", "vocab_size": 512, "hidden_size": 64,
      "intermediate_size": 96, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
      "mamba_num_heads": 8, "mamba_head_dim": 10, "ssm_state_size": 12, "attention_bias": true,
      "tie_word_embeddings": true)";
  const ModelConfig c = ModelConfig::from_json("{" + sizes + R"(, "num_hidden_layers": 52,
      "hybrid_override_pattern": "M*M-", "mamba_n_groups": 2, "mamba_d_conv": 3, "mamba_chunk_size": 16,
      "time_step_limit": [0.0, Infinity]})");
  EXPECT_EQ(c.num_layers, 4);
  EXPECT_EQ(c.mamba_layers, (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(c.mlp_only_layers, (std::vector<bool>{false, false, false, true}));
  EXPECT_TRUE(c.mixer_only_layers);
  EXPECT_EQ(c.mamba_groups, 2);
  EXPECT_EQ(c.mamba_taps, 3);
  EXPECT_EQ(c.mamba_chunk, 16);
  EXPECT_EQ(c.mamba_dt_min, 0.001);
  EXPECT_EQ(c.activation, Activation::kRelu2);
  EXPECT_EQ(c.rope_layers, (std::vector<bool>(4, false)));
  EXPECT_FALSE(c.qkv_bias || c.o_bias || c.tie_word_embeddings);
  EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json());
  const ModelConfig saved = ModelConfig::from_json("{" + sizes + R"(, "layers_block_type": ["linear_attention",
      "full_attention", "linear_attention", "mlp"], "hybrid_override_pattern": "M", "n_groups": 2})");
  EXPECT_EQ(saved.mamba_layers, c.mamba_layers);
  EXPECT_EQ(saved.mlp_only_layers, c.mlp_only_layers);
  // The alias layer_types with the older names; an older key over its newer one, as NemotronHConfig's post-init.
  const ModelConfig aliased = ModelConfig::from_json("{" + sizes + R"(, "layer_types": ["mamba", "attention", "mamba",
      "mlp"], "n_groups": 4, "mamba_n_groups": 2})");
  EXPECT_EQ(aliased.mamba_layers, c.mamba_layers);
  EXPECT_EQ(aliased.mamba_groups, 2);
  auto refusal = [&](const std::string& more) {
    return message_of<std::invalid_argument>([&] { ModelConfig::from_json("{" + sizes + ", " + more + "}"); });
  };
  // Expert layers: the MLP-alone kind with experts; transformers' default layers hold one.
  const ModelConfig moe = ModelConfig::from_json("{" + sizes + R"(, "n_routed_experts": 6, "moe_latent_size": 24})");
  EXPECT_EQ(moe.mlp_only_layers, (std::vector<bool>{false, true, false, true}));
  EXPECT_EQ(moe.moe_layers, (std::vector<bool>{false, true, false, false}));
  EXPECT_TRUE(moe.ungated_experts && moe.norm_topk_prob && moe.expert_correction_bias && moe.router_fp32);
  EXPECT_EQ(moe.moe_latent_size, 24);
  EXPECT_EQ(moe.shared_expert_intermediate_size, 7688);
  EXPECT_EQ(ModelConfig::from_json(moe.to_json()).to_json(), moe.to_json());
  EXPECT_NE(refusal(R"("hybrid_override_pattern": "M*X")").find("hybrid_override_pattern has 'X'"), std::string::npos);
  EXPECT_NE(refusal(R"("layers_block_type": ["linear_attention", "conv"])").find("layer type 'conv'"), std::string::npos);
  EXPECT_NE(refusal(R"("moe_latent_size": -1)").find("moe_latent_size -1"), std::string::npos);
  EXPECT_NE(refusal(R"("hybrid_override_pattern": "M-", "mamba_hidden_act": "gelu")").find("takes SiLU here, not gelu"),
            std::string::npos);
  EXPECT_NE(refusal(R"("hybrid_override_pattern": "M-", "n_groups": 3)").find("heads a multiple of groups"),
            std::string::npos);
  EXPECT_NE(refusal(R"("hybrid_override_pattern": "M-", "time_step_min": -1)").find("time_step_min must be >= 0"),
            std::string::npos);
}

// Falcon-H1: the Mamba2 width mamba_d_ssm (1024 when absent, mamba_expand times hidden_size when null), its gate and
// norm from mamba_rms_norm and mamba_norm_before_gate, the multipliers' lists of five and two; misfits refused.
TEST(ConfigJson, FalconH1Keys) {
  const std::string sizes = R"("model_type": "falcon_h1", "vocab_size": 512, "hidden_size": 64,
      "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
      "mamba_n_heads": 8, "mamba_d_state": 12, "mamba_chunk_size": 16)";
  const ModelConfig c = ModelConfig::from_json("{" + sizes + R"(, "ssm_multipliers": [1, 2, 3, 4, 5]})");
  EXPECT_TRUE(c.mamba_beside_attention);
  EXPECT_EQ(c.mamba_head_dim, 128);  // 1024 over 8 heads
  EXPECT_EQ(c.mamba_gate, Mamba2Gate::kGateOnly);
  EXPECT_EQ(c.ssm_multipliers[4], 5);
  EXPECT_EQ(c.rms_norm_eps, 1e-5);
  EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json());
  const ModelConfig expanded = ModelConfig::from_json(
      "{" + sizes + R"(, "mamba_d_ssm": null, "mamba_rms_norm": true, "mamba_norm_before_gate": false})");
  EXPECT_EQ(expanded.mamba_head_dim, 16);  // 2 x 64 over 8 heads
  EXPECT_EQ(expanded.mamba_gate, Mamba2Gate::kGateThenNormFp32Weight);
  EXPECT_EQ(ModelConfig::from_json(expanded.to_json()).to_json(), expanded.to_json());
  auto refusal = [&](const std::string& more) {
    return message_of<std::invalid_argument>([&] { ModelConfig::from_json("{" + sizes + ", " + more + "}"); });
  };
  EXPECT_NE(refusal(R"("ssm_multipliers": [1, 2])").find("ssm_multipliers must hold 5 numbers, got 2"), std::string::npos);
  EXPECT_NE(refusal(R"("mlp_multipliers": [1])").find("mlp_multipliers must hold 2 numbers, got 1"), std::string::npos);
  EXPECT_NE(refusal(R"("mamba_d_ssm": 100)").find("must be the inner width mamba_d_ssm (100)"), std::string::npos);
}

// time_step_limit as each writer writes it: Python's json (a bare Infinity), transformers 5 ({"__float__":
// "Infinity"}), or finite; NaN, a negative or inverted range, and other shapes refused by name; a string that
// holds the word Infinity is left as it is.
TEST(ConfigJson, TimeStepLimitWithInfinity) {
  const std::string sizes = R"("model_type": "granitemoehybrid", "vocab_size": 512, "hidden_size": 64,
      "intermediate_size": 24, "num_hidden_layers": 1, "num_attention_heads": 4, "mamba_n_heads": 8,
      "mamba_d_state": 12, "mamba_chunk_size": 16, "name_or_path": "Infinity and NaN")";
  auto read = [&](const std::string& limit) {
    return ModelConfig::from_json("{" + sizes + R"(, "time_step_limit": )" + limit + "}");
  };
  for (const char* infinite : {"[0.001, Infinity]", R"([0.001, {"__float__": "Infinity"}])"}) {
    const ModelConfig c = read(infinite);
    EXPECT_EQ(c.mamba_dt_min, 0.001) << infinite;
    EXPECT_EQ(c.mamba_dt_max, 0) << infinite;
  }
  EXPECT_EQ(read("[0.0, 0.1]").mamba_dt_max, 0.1);
  EXPECT_EQ(read("[0.0, 0.1]").to_json(), ModelConfig::from_json(read("[0.0, 0.1]").to_json()).to_json());
  auto refusal = [&](const std::string& limit) { return message_of<std::invalid_argument>([&] { read(limit); }); };
  for (const char* bad : {"[0.0, NaN]", "[NaN, 1.0]", "[-Infinity, 1.0]", "[-0.5, 1.0]", "[0.5, 0.1]"})
    EXPECT_NE(refusal(bad).find("time_step_limit must be [min, max] with 0 <= min < max"), std::string::npos) << bad;
  EXPECT_NE(refusal("[0.0]").find("time_step_limit must be [min, max], got [0.0]"), std::string::npos);
  EXPECT_NE(refusal(R"([0.0, {"__float__": "Huge"}])").find("time_step_limit[1]: expected a number"), std::string::npos);
  EXPECT_NE(refusal(R"([0.0, "Infinity"])").find("time_step_limit[1]: expected a number"), std::string::npos);
  EXPECT_NE(refusal("[0.0, Infinityx]").find("not valid JSON"), std::string::npos);
}

// Latent attention's keys: DeepSeek V3's defaults, q_lora_rank null for q_proj, YaRN's mscale_all_dim kept for the
// scores' scale, glm4_moe_lite's mlp_layer_types; sizes that cannot be refused by name.
TEST(ConfigJson, LatentAttentionKeys) {
  const char* base = R"({"vocab_size": 512, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 3,
    "num_attention_heads": 4, "model_type": )";
  const ModelConfig deepseek = ModelConfig::from_json(std::string(base) + R"("deepseek_v3", "rope_scaling": {"type":
    "yarn", "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096}})");
  EXPECT_TRUE(deepseek.latent_attention());
  EXPECT_EQ(deepseek.kv_lora_rank, 512);
  EXPECT_EQ(deepseek.q_lora_rank, 1536);
  EXPECT_EQ(deepseek.head_dim, 64);  // qk_rope_head_dim: the rotated key's width
  EXPECT_EQ(deepseek.qk_nope_head_dim + deepseek.v_head_dim, 256);
  EXPECT_TRUE(deepseek.interleaved_rope);
  EXPECT_EQ(deepseek.expert_groups, 8);
  EXPECT_EQ(deepseek.expert_groups_chosen, 4);
  EXPECT_EQ(deepseek.routed_scaling_factor, 2.5);
  EXPECT_EQ(deepseek.rope.mscale_all_dim, 1.0);
  EXPECT_EQ(ModelConfig::from_json(deepseek.to_json()).to_json(), deepseek.to_json());
  const ModelConfig q_proj = ModelConfig::from_json(std::string(base) + R"("kimi_k2", "q_lora_rank": null,
    "rope_interleave": false})");
  EXPECT_EQ(q_proj.q_lora_rank, 0);
  EXPECT_FALSE(q_proj.interleaved_rope);
  EXPECT_EQ(ModelConfig::from_json(q_proj.to_json()).to_json(), q_proj.to_json());
  const ModelConfig lite = ModelConfig::from_json(std::string(base) + R"("glm4_moe_lite",
    "mlp_layer_types": ["dense", "sparse", "dense"]})");
  EXPECT_FALSE(lite.is_moe_layer(0));
  EXPECT_TRUE(lite.is_moe_layer(1));
  EXPECT_FALSE(lite.is_moe_layer(2));
  EXPECT_EQ(ModelConfig::from_json(lite.to_json()).to_json(), lite.to_json());
  EXPECT_TRUE(ModelConfig::from_json(std::string(base) + R"("glm4_moe_lite"})").is_moe_layer(2));  // all but the first
  auto error = [&](const std::string& rest) {
    return message_of<std::invalid_argument>([&] { ModelConfig::from_json(std::string(base) + rest); });
  };
  EXPECT_NE(error(R"("glm4_moe_lite", "mlp_layer_types": ["dense", "sparse"]})").find("mlp_layer_types has 2 entries for 3"),
            std::string::npos);
  EXPECT_NE(error(R"("glm4_moe_lite", "mlp_layer_types": ["dense", "moe", "dense"]})").find("layer type 'moe'"),
            std::string::npos);
  EXPECT_NE(error(R"("deepseek_v3", "qk_rope_head_dim": 7})").find("qk_rope_head_dim even"), std::string::npos);
  EXPECT_NE(error(R"("deepseek_v3", "kv_lora_rank": 0})").find("kv_lora_rank 0"), std::string::npos);
  // DeepSeek V3.2: index_topk read and written back; its rope always interleaved, its queries always through q_a_proj.
  const ModelConfig sparse = ModelConfig::from_json(std::string(base) + R"("deepseek_v32", "index_topk": 300,
    "rope_interleave": false})");
  EXPECT_EQ(sparse.dense_attention_limit, 300);
  EXPECT_TRUE(sparse.interleaved_rope);
  EXPECT_EQ(ModelConfig::from_json(sparse.to_json()).dense_attention_limit, 300);
  EXPECT_EQ(ModelConfig::from_json(std::string(base) + R"("glm_moe_dsa"})").dense_attention_limit, 2048);
  EXPECT_NE(error(R"("deepseek_v32", "q_lora_rank": null})").find("deepseek_v32 needs q_lora_rank"), std::string::npos);
  EXPECT_NE(error(R"("deepseek_v32", "index_topk": 0})").find("index_topk must be >= 1"), std::string::npos);
  // mscale_all_dim under another rope type than yarn still scales latent attention's scores, and reads back.
  const ModelConfig linear = ModelConfig::from_json(std::string(base) + R"("deepseek_v3", "rope_scaling": {"type":
    "linear", "factor": 4.0, "mscale_all_dim": 0.7}})");
  EXPECT_EQ(linear.rope.mscale_all_dim, 0.7);
  EXPECT_EQ(ModelConfig::from_json(linear.to_json()).rope.mscale_all_dim, 0.7);
}

// The general router's keys, under each family's names as its released configs and transformers 5 write them.
TEST(ConfigJson, GeneralRouterKeysAsReleased) {
  const char* base = R"({"vocab_size": 512, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "model_type": )";
  const ModelConfig glm = ModelConfig::from_json(std::string(base) + R"("glm4_moe", "n_routed_experts": 8,
    "num_experts_per_tok": 3, "n_group": 4, "topk_group": 2, "n_shared_experts": 2, "moe_intermediate_size": 24,
    "routed_scaling_factor": 2.5, "first_k_dense_replace": 2, "num_nextn_predict_layers": 1})");
  EXPECT_EQ(glm.num_experts, 8);
  EXPECT_TRUE(glm.router_scores == RouterScores::kSigmoid && glm.router_fp32 && glm.expert_correction_bias);
  EXPECT_EQ(glm.expert_groups, 4);
  EXPECT_EQ(glm.expert_groups_chosen, 2);
  EXPECT_TRUE(glm.norm_topk_prob);  // on by default in GLM's config
  EXPECT_EQ(glm.routing_norm_epsilon, 1e-20);
  EXPECT_EQ(glm.routed_scaling_factor, 2.5);
  EXPECT_EQ(glm.shared_expert_intermediate_size, 48);  // two experts' widths
  EXPECT_FALSE(glm.shared_expert_gated);
  EXPECT_EQ(glm.moe_layers, (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(glm.rope.partial_rotary_factor, 0.5);  // GLM's default
  EXPECT_FALSE(glm.qk_norm);
  EXPECT_TRUE(ModelConfig::from_json(std::string(base) + R"("glm4_moe", "use_qk_norm": true})").qk_norm);
  EXPECT_EQ(ModelConfig::from_json(glm.to_json()).to_json(), glm.to_json());

  const ModelConfig ernie = ModelConfig::from_json(std::string(base) + R"("ernie4_5_moe", "moe_num_experts": 6,
    "moe_k": 2, "moe_intermediate_size": 40, "moe_num_shared_experts": 1, "moe_layer_start_index": 1,
    "moe_layer_end_index": 3, "moe_layer_interval": 2, "use_bias": true})");
  EXPECT_EQ(ernie.num_experts, 6);
  EXPECT_EQ(ernie.experts_per_token, 2);
  EXPECT_EQ(ernie.moe_layers, (std::vector<bool>{false, true, false, true}));  // (i + 1) % 2 == 0 in [1, 3]
  EXPECT_TRUE(ernie.router_scores == RouterScores::kSoftmax && ernie.router_fp32 && ernie.expert_correction_bias);
  EXPECT_TRUE(ernie.norm_topk_prob && !ernie.routing_weights_fp32);
  EXPECT_EQ(ernie.routing_norm_floor, 1e-12);  // moe_norm_min's default
  EXPECT_EQ(ernie.shared_expert_intermediate_size, 40);
  EXPECT_TRUE(ernie.lm_head_bias && ernie.mlp_bias);
  EXPECT_EQ(ModelConfig::from_json(ernie.to_json()).to_json(), ernie.to_json());

  const ModelConfig hunyuan = ModelConfig::from_json(std::string(base) + R"("hunyuan_v1_moe", "num_experts": 4,
    "moe_topk": [1, 2, 3, 4]})");
  EXPECT_EQ(hunyuan.layer_top_k(0), 1);
  EXPECT_EQ(hunyuan.layer_top_k(3), 4);
  EXPECT_EQ(hunyuan.moe_intermediate_size, 128);          // experts as wide as the dense MLP ...
  EXPECT_EQ(hunyuan.shared_expert_intermediate_size, 128);  // ... and the shared one too
  EXPECT_TRUE(hunyuan.router_fp32 && hunyuan.routing_weights_fp32 && !hunyuan.expert_correction_bias);
  EXPECT_EQ(ModelConfig::from_json(hunyuan.to_json()).to_json(), hunyuan.to_json());
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(std::string(base) + R"("hunyuan_v1_moe", "num_experts": 4, "moe_topk": [1, 2]})");
            }).find("moe_topk has 2 entries for 4 layers"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(std::string(base) + R"("hunyuan_v1_moe", "num_experts": 4, "moe_topk": [1, 2, 0, 1]})");
            }).find("layer 2 routes each token to 0 of 4 experts"),
            std::string::npos);

  const ModelConfig minimax = ModelConfig::from_json(std::string(base) + R"("minimax_m2", "num_local_experts": 6,
    "num_experts_per_tok": 2, "rotary_dim": 16, "rope_theta": 5000000})");
  EXPECT_EQ(minimax.rope.partial_rotary_factor, 0.5);  // rotary_dim / head_dim
  EXPECT_TRUE(minimax.router_scores == RouterScores::kSigmoid && !minimax.router_fp32 && minimax.expert_correction_bias);
  EXPECT_TRUE(minimax.qk_norm_full_width && minimax.norm_topk_prob && minimax.routing_weights_fp32);
  EXPECT_EQ(minimax.moe_intermediate_size, 128);
  EXPECT_EQ(ModelConfig::from_json(minimax.to_json()).to_json(), minimax.to_json());

  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(std::string(base) + R"("ernie4_5_moe", "moe_layer_interval": 0})");
            }).find("moe_layer_interval must be >= 1"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(std::string(base) + R"("ernie4_5_moe", "moe_norm_min": -1.0})");
            }).find("moe_norm_min not negative"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(std::string(base) + R"("qwen3", "quantization_config": {"quant_method": "fp8",
                "weight_block_size": [128, 128], "fmt": "e5m2"}})");
            }).find("fp8 format 'e5m2' is not supported"),
            std::string::npos);
  for (const char* groups : {R"("n_group": 3)", R"("n_group": 4, "topk_group": 1)", R"("n_group": 8)"}) {
    EXPECT_NE(message_of<std::invalid_argument>([&] {
                ModelConfig::from_json(std::string(base) + R"("glm4_moe", "n_routed_experts": 8,
                  "num_experts_per_tok": 3, )" + groups + "}");
              }).find("cannot give 3 experts per token"),
              std::string::npos)
        << groups;
  }
}

TEST(ConfigJson, Phi3FusedProjectionsLongRopeAndPartialRotary) {
  const char* base = R"({"model_type": "phi3", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 128,
    "num_hidden_layers": 2, "num_attention_heads": 4, "sliding_window": 2047, "max_position_embeddings": 131072)";
  const auto read = [&](const std::string& extra) { return ModelConfig::from_json(std::string(base) + extra + "}"); };
  const ModelConfig phi3 = read("");
  EXPECT_TRUE(phi3.fused_projections);
  EXPECT_EQ(phi3.sliding_window, 2047);
  EXPECT_EQ(phi3.rope.rotary_dim(phi3.head_dim), 16);
  EXPECT_FALSE(phi3.long_rope(1 << 20));

  // The old "su" spelling, original_max_position_embeddings from the top level (4096 when absent), the factor
  // and the attention factor derived as transformers derives them.
  const char* su = R"(, "rope_scaling": {"type": "su", "short_factor": [1, 1, 1, 1, 1, 1, 1, 1],
    "long_factor": [2, 2, 2, 2, 2, 2, 2, 2]})";
  const ModelConfig longrope = read(su);
  EXPECT_EQ(longrope.rope.type, RopeType::kLongRope);
  EXPECT_EQ(longrope.rope.original_max_position_embeddings, 4096);
  EXPECT_DOUBLE_EQ(longrope.rope.factor, 32.0);
  EXPECT_DOUBLE_EQ(longrope.rope.attention_factor, std::sqrt(1.0 + std::log(32.0) / std::log(4096.0)));
  EXPECT_FALSE(longrope.long_rope(4096));
  EXPECT_TRUE(longrope.long_rope(4097));
  EXPECT_EQ(read(std::string(su) + R"(, "original_max_position_embeddings": 8192)").rope.original_max_position_embeddings,
            8192);
  EXPECT_EQ(ModelConfig::from_json(longrope.to_json()).to_json(), longrope.to_json());

  const ModelConfig partial = read(R"(, "rope_parameters": {"rope_type": "default", "partial_rotary_factor": 0.75,
    "original_max_position_embeddings": 40})");
  EXPECT_EQ(partial.rope.rotary_dim(partial.head_dim), 12);
  // Found by fuzz_config_json: written back, a default rope's original_max_position_embeddings read differently.
  EXPECT_EQ(ModelConfig::from_json(partial.to_json()).to_json(), partial.to_json());

  const auto error = [&](const std::string& extra) {
    return message_of<std::invalid_argument>([&] { read(extra); });
  };
  EXPECT_NE(error(R"(, "rope_scaling": {"type": "longrope", "short_factor": [1.0], "long_factor": [2.0]})")
                .find("short_factor has 1 entries, longrope needs rotary_dim / 2 = 8"),
            std::string::npos);
  EXPECT_NE(error(R"(, "rope_parameters": {"rope_type": "default", "partial_rotary_factor": 0.1})")
                .find("partial_rotary_factor 0.1 rotates 1 of 16"),
            std::string::npos);
  EXPECT_NE(error(R"(, "rope_scaling": {"type": "yarn", "factor": 4.0})").find("short_factor"), std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([] {
              ModelConfig::from_json(R"({"model_type": "llama", "vocab_size": 512, "hidden_size": 64,
                "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
                "rope_scaling": {"type": "dynamic", "factor": 4.0}})");
            }).find("unsupported rope type 'dynamic'"),
            std::string::npos);
}

TEST(ConfigJson, FeaturesTheEngineLacksAreNamed) {
  const auto error = [](const std::string& text) {
    return message_of<std::invalid_argument>([&] { ModelConfig::from_json(text); });
  };
  EXPECT_NE(error(with(kGemma2, R"("quantization_config": {"quant_method": "bitsandbytes"})"))
                .find("quant_method 'bitsandbytes' is not supported"),
            std::string::npos);
  EXPECT_NE(error(with(kGemma2, R"("vision_config": {})")).find("'vision_config'"), std::string::npos);
  EXPECT_NE(error(with(kGemma2, R"("layer_types": ["sliding_attention", "chunked_attention", "full_attention",
    "full_attention"])")).find("'chunked_attention'"), std::string::npos);
  EXPECT_NE(error(with(kGemma2, R"("layer_types": ["full_attention"])")).find("layer_types has 1 entries for 4"),
            std::string::npos);
  EXPECT_NE(error(with(kGemma2, R"("hidden_activation": "relu")")).find("'relu'"), std::string::npos);
  EXPECT_NE(error(with(kGemma2, R"("use_bidirectional_attention": true)")).find("use_bidirectional_attention"),
            std::string::npos);
  const std::string unknown = error(R"({"model_type": "falcon"})");
  EXPECT_NE(unknown.find("'falcon'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("gemma3_text"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("--model hf"), std::string::npos) << unknown;
}

// Found by fuzz_config_json: a MoE family's config with no experts was written without its MoE keys, and read back
// with the default number of experts.
TEST(ConfigJson, AMixtureFamilyWithoutExpertsWritesThatItHasNone) {
  const ModelConfig none = ModelConfig::from_json(R"({"model_type": "qwen2_moe", "vocab_size": 512, "hidden_size": 64,
    "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "num_experts": 0})");
  EXPECT_EQ(none.num_experts, 0);
  EXPECT_EQ(ModelConfig::from_json(none.to_json()).num_experts, 0);
  EXPECT_EQ(ModelConfig::from_json(none.to_json()).to_json(), none.to_json());
}

// Found by fuzz_config_json: a partial_rotary_factor too large for the rotated width's integer was cast.
TEST(ConfigJson, APartialRotaryFactorOutsideZeroToOneIsNamed) {
  const std::string message = message_of<std::invalid_argument>([] {
    ModelConfig::from_json(R"({"model_type": "phi3", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 128,
      "num_hidden_layers": 2, "num_attention_heads": 4, "rope_parameters": {"rope_type": "default",
      "partial_rotary_factor": 0.78e41}})");
  });
  EXPECT_NE(message.find("partial_rotary_factor must be in (0, 1]"), std::string::npos) << message;
}

// Found by fuzz_config_json: gemma2 with no window (null) was written without the key, which reads back as 4096.
TEST(ConfigJson, NoWindowIsWrittenAsNoneWhereTheFamilyHasADefault) {
  const ModelConfig none = ModelConfig::from_json(with(kGemma2, R"("sliding_window": null, "layer_types": [])"));
  EXPECT_EQ(none.sliding_window, 0);
  EXPECT_EQ(ModelConfig::from_json(none.to_json()).sliding_window, 0);
}

// A window that use_sliding_window turns on is written with it, so that it reads back on.
TEST(ConfigJson, AnOptInWindowIsWrittenWithItsSwitch) {
  const ModelConfig qwen2 = ModelConfig::from_json(R"({"model_type": "qwen2", "vocab_size": 512, "hidden_size": 64,
    "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "use_sliding_window": true,
    "sliding_window": 8})");
  EXPECT_EQ(qwen2.sliding_window, 8);
  EXPECT_EQ(ModelConfig::from_json(qwen2.to_json()).sliding_window, 8);
}

TEST(ConfigJson, SmolLM3LayersWithoutRope) {
  const std::string base = R"({"model_type": "smollm3", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 128,
    "num_hidden_layers": 8, "num_attention_heads": 4)";
  const ModelConfig every_fourth = ModelConfig::from_json(base + "}");
  EXPECT_EQ(every_fourth.rope_layers, (std::vector<bool>{true, true, true, false, true, true, true, false}));
  EXPECT_TRUE(every_fourth.layer_kinds.empty());  // no window without use_sliding_window
  EXPECT_EQ(every_fourth.rope.theta, 2e6);
  const ModelConfig listed = ModelConfig::from_json(
      base + R"(, "no_rope_layers": [1, 0, 1, 1, 1, 1, 1, 0], "use_sliding_window": true, "sliding_window": 32})");
  EXPECT_FALSE(listed.layer_uses_rope(1));
  EXPECT_EQ(listed.layer_window(1), 32);  // the no-rope layers slide
  EXPECT_EQ(listed.layer_window(0), 0);
  EXPECT_EQ(ModelConfig::from_json(listed.to_json()).to_json(), listed.to_json());
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json(base + R"(, "no_rope_layers": [1]})"); })
                .find("no_rope_layers has 1 entries for 8 layers"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(base + R"(, "no_rope_layer_interval": 0})");
            }).find("no_rope_layer_interval must be >= 1, got 0"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json(base + R"(, "no_rope_layers": 3})"); })
                .find("field 'no_rope_layers' has the wrong type (3)"),
            std::string::npos);
}

// Every entry of the family table reads a config of sizes alone and writes it back as it read it.
TEST(ConfigJson, EveryFamilyOfTheTableReadsAndWritesItsConfig) {
  const std::vector<std::string> types = supported_model_types();
  EXPECT_EQ(std::set<std::string>(types.begin(), types.end()).size(), types.size());  // each once
  // heads of 24: every rotated share even; values of 16 and 2 kv heads (twice on some families' sliding layers) fit
  const std::string sizes = R"("vocab_size": 512, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 24, "v_head_dim": 16)";
  for (const std::string& type : types) {
    const char* text_type = multimodal_text_type(type);
    const ModelConfig c = ModelConfig::from_json(
        text_type == nullptr ? R"({"model_type": ")" + type + R"(", )" + sizes + "}"
                             : R"({"model_type": ")" + type + R"(", "text_config": {)" + sizes + "}}");
    EXPECT_EQ(c.model_type, text_type == nullptr ? type : std::string(text_type));
    EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json()) << type;
  }
}

// Gemma 4's full-attention layers: their heads as released configs give them (global_head_dim, and with
// attention_k_eq_v num_global_key_value_heads) and as transformers 5 saves them (per_layer_config), alike; the last
// layer full whatever layer_types says; the MoE variant's keys read back; bidirectional text refused by name.
TEST(ConfigJson, Gemma4ReadsItsLayerShapesEitherWay) {
  const std::string sizes = R"("model_type": "gemma4_text", "vocab_size": 512, "hidden_size": 64,
      "intermediate_size": 128, "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2,
      "head_dim": 16, "attention_k_eq_v": true, "hidden_size_per_layer_input": 8, "vocab_size_per_layer_input": 512,
      "layer_types": ["sliding_attention", "full_attention", "sliding_attention"])";
  const ModelConfig released = ModelConfig::from_json(
      "{" + sizes + R"(, "global_head_dim": 32, "num_global_key_value_heads": 1, "use_bidirectional_attention": "vision"})");
  const ModelConfig saved = ModelConfig::from_json(
      "{" + sizes + R"(, "per_layer_config": {"1": {"head_dim": 32, "num_key_value_heads": 1},
                                              "2": {"head_dim": 32, "num_key_value_heads": 1}}})");
  for (const ModelConfig* c : {&released, &saved}) {
    EXPECT_EQ(c->layer_window(2), 0);  // forced full
    EXPECT_EQ(c->layer_head_dim(0), 16);
    EXPECT_EQ(c->layer_kv_head_count(0), 2);
    EXPECT_EQ(c->layer_head_dim(2), 32);
    EXPECT_EQ(c->layer_kv_head_count(1), 1);
    EXPECT_EQ(c->attention_scale(), 1.0);
    EXPECT_EQ(ModelConfig::from_json(c->to_json()).to_json(), c->to_json());
  }
  auto refusal = [&](const std::string& more) {
    return message_of<std::invalid_argument>([&] { ModelConfig::from_json("{" + sizes + ", " + more + "}"); });
  };
  EXPECT_NE(refusal(R"("enable_moe_block": true)").find("'num_experts'"), std::string::npos);
  const ModelConfig moe = ModelConfig::from_json(
      "{" + sizes + R"(, "enable_moe_block": true, "num_experts": 8, "top_k_experts": 2, "moe_intermediate_size": 24})");
  EXPECT_TRUE(moe.experts_beside_mlp && moe.norm_topk_prob && moe.routing_weights_fp32);
  EXPECT_EQ(moe.experts_per_token, 2);
  EXPECT_EQ(ModelConfig::from_json(moe.to_json()).to_json(), moe.to_json());
  EXPECT_NE(refusal(R"("use_bidirectional_attention": "all")").find("use_bidirectional_attention"), std::string::npos);
  EXPECT_NE(refusal(R"("per_layer_config": {"7": {"head_dim": 8}})").find("names layer '7'"), std::string::npos);
  EXPECT_NE(refusal(R"("per_layer_config": {"1": {"intermediate_size": 8}})").find("'intermediate_size' is not supported"),
            std::string::npos);
  EXPECT_NE(refusal(R"("per_layer_config": {"1": 5})").find("per_layer_config of layer 1 is not an object"),
            std::string::npos);
  EXPECT_NE(refusal(R"("per_layer_config": {"1": {"head_dim": 7}})").find("layer 1 has heads of 7 values"),
            std::string::npos);
  EXPECT_NE(refusal(R"("per_layer_config": {"1": {"num_key_value_heads": 3}})").find("3 key-value heads"),
            std::string::npos);
  // layer_types shorter than the layers (found by fuzz.config_json: it once escaped as std::out_of_range)
  std::string four_layers = sizes;
  four_layers.replace(four_layers.find("\"num_hidden_layers\": 3"), 22, "\"num_hidden_layers\": 4");
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json("{" + four_layers + "}"); })
                .find("layer_types has 3 entries for 4 layers"),
            std::string::npos);
  const std::string small_table = R"("model_type": "gemma4_text", "vocab_size": 512, "hidden_size": 64,
      "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "head_dim": 16,
      "hidden_size_per_layer_input": 8, "vocab_size_per_layer_input": 100)";
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json("{" + small_table + "}"); })
                .find("ids past the table"),
            std::string::npos);
}

// EXAONE 4's sliding_window_pattern as text ("L" local, "G" global, repeated from layer 0, the last layer global),
// with rope on the sliding layers only; without a window (and so every layer full, as transformers needs them) every
// layer rotates. Seed-OSS reads o's bias under its own key.
TEST(ConfigJson, Exaone4PatternTextAndSeedOssOutputBias) {
  const std::string sizes = R"("vocab_size": 512, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 5,
      "num_attention_heads": 4, "head_dim": 16)";
  const ModelConfig exaone = ModelConfig::from_json(
      R"({"model_type": "exaone4", )" + sizes + R"(, "sliding_window": 8, "sliding_window_pattern": "LLG"})");
  const bool sliding[] = {true, true, false, true, false};
  for (int64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(exaone.layer_window(i), sliding[i] ? 8 : 0) << i;
    EXPECT_EQ(exaone.layer_uses_rope(i), sliding[i]) << i;
  }
  const std::string full = R"("full_attention")";
  const ModelConfig unwindowed = ModelConfig::from_json(R"({"model_type": "exaone4", )" + sizes +
                                                        R"(, "sliding_window": null, "layer_types": [)" + full + ", " +
                                                        full + ", " + full + ", " + full + ", " + full + "]}");
  for (int64_t i = 0; i < 5; ++i) EXPECT_TRUE(unwindowed.layer_window(i) == 0 && unwindowed.layer_uses_rope(i)) << i;
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(R"({"model_type": "exaone4", )" + sizes +
                                     R"(, "sliding_window": null, "sliding_window_pattern": "LLG"})");
            }).find("sliding_window null"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(R"({"model_type": "exaone4", )" + sizes + R"(, "sliding_window_pattern": "LXG"})");
            }).find("'LXG'"),
            std::string::npos);
  const ModelConfig seed = ModelConfig::from_json(R"({"model_type": "seed_oss", )" + sizes + R"(, "attention_out_bias": true})");
  EXPECT_TRUE(seed.qkv_bias && seed.o_bias);
  const ModelConfig seed_default = ModelConfig::from_json(R"({"model_type": "seed_oss", )" + sizes + "}");
  EXPECT_TRUE(seed_default.qkv_bias && !seed_default.o_bias);
  EXPECT_EQ(ModelConfig::from_json(seed.to_json()).to_json(), seed.to_json());
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(R"({"model_type": "llama", )" + sizes + R"(, "hidden_act": "xielu"})");
            }).find("xielu"),
            std::string::npos);
}

// Ministral 3 as published: a mistral3 checkpoint whose text_config is a ministral3, YaRN by default (as
// Ministral3Config fills it in) and Llama 4's query scale read from rope_parameters, which transformers needs.
TEST(ConfigJson, Ministral3ReadsYarnAndTheQueryScale) {
  const std::string sizes = R"("vocab_size": 512, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
      "num_attention_heads": 4, "head_dim": 16)";
  const ModelConfig defaults =
      ModelConfig::from_json(R"({"model_type": "mistral3", "text_config": {"model_type": "ministral3", )" + sizes + "}}");
  EXPECT_EQ(defaults.model_type, "ministral3");
  EXPECT_EQ(defaults.rope.type, RopeType::kYarn);
  EXPECT_DOUBLE_EQ(defaults.rope.theta, 1e6);
  EXPECT_DOUBLE_EQ(defaults.rope.factor, 16.0);
  EXPECT_DOUBLE_EQ(defaults.rope.attention_factor, 1.0);  // mscale and mscale_all_dim of 1 cancel
  EXPECT_EQ(defaults.rope.original_max_position_embeddings, 16384);
  EXPECT_DOUBLE_EQ(defaults.rope.llama4_scaling_beta, 0.1);
  EXPECT_EQ(defaults.sliding_window, 0);
  EXPECT_FALSE(defaults.has_window());
  const std::string yarn = R"("rope_type": "yarn", "rope_theta": 1e6, "factor": 16.0)";
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(R"({"model_type": "ministral3", )" + sizes + R"(, "rope_parameters": {)" + yarn +
                                     R"(, "original_max_position_embeddings": 16}})");
            }).find("ministral3 rope_parameters lacks 'llama_4_scaling_beta'"),
            std::string::npos);
  const ModelConfig mistral = ModelConfig::from_json(R"({"model_type": "mistral", )" + sizes + R"(, "rope_parameters": {)" +
                                                     yarn + R"(, "original_max_position_embeddings": 16, "llama_4_scaling_beta": 0.1}})");
  EXPECT_DOUBLE_EQ(mistral.rope.llama4_scaling_beta, 0.0);  // MistralAttention does not read it
}

// Pythia's config.json as published: rotary_pct and rotary_emb_base at the top level, no rope_parameters; and a
// GPT-NeoX without the parallel residual.
TEST(ConfigJson, GptNeoxReadsItsOwnRopeKeys) {
  const std::string sizes = R"("model_type": "gpt_neox", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 128,
      "num_hidden_layers": 2, "num_attention_heads": 4)";
  const ModelConfig pythia =
      ModelConfig::from_json("{" + sizes + R"(, "rotary_pct": 0.5, "rotary_emb_base": 20000, "layer_norm_eps": 1e-6})");
  EXPECT_DOUBLE_EQ(pythia.rope.partial_rotary_factor, 0.5);
  EXPECT_DOUBLE_EQ(pythia.rope.theta, 20000);
  EXPECT_DOUBLE_EQ(pythia.rms_norm_eps, 1e-6);
  EXPECT_TRUE(pythia.parallel_block && pythia.layer_norm && !pythia.gated_mlp && pythia.qkv_bias && pythia.mlp_bias);
  EXPECT_FALSE(pythia.tie_word_embeddings);
  const ModelConfig defaults = ModelConfig::from_json("{" + sizes + "}");
  EXPECT_DOUBLE_EQ(defaults.rope.partial_rotary_factor, 0.25);
  EXPECT_EQ(defaults.activation, Activation::kGelu);
  const ModelConfig sequential = ModelConfig::from_json("{" + sizes + R"(, "use_parallel_residual": false,
      "attention_bias": false})");
  EXPECT_FALSE(sequential.parallel_block || sequential.qkv_bias || sequential.o_bias);
  EXPECT_TRUE(sequential.mlp_bias);
  for (const ModelConfig& c : {pythia, defaults, sequential})
    EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json());
}

// GPT-2's config.json as published: its own size keys (n_embd, n_layer, n_head, n_positions; n_inner null for 4x),
// activation_function, layer_norm_epsilon, tied embeddings, biases everywhere but lm_head, learned positions; and
// its attention options.
TEST(ConfigJson, Gpt2ReadsItsOwnKeys) {
  const std::string gpt2 = R"("model_type": "gpt2", "vocab_size": 50257, "n_embd": 768, "n_layer": 12, "n_head": 12,
      "n_positions": 1024, "n_inner": null, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-05)";
  const ModelConfig c = ModelConfig::from_json("{" + gpt2 + "}");
  EXPECT_EQ(c.hidden_size, 768);
  EXPECT_EQ(c.intermediate_size, 3072);
  EXPECT_EQ(c.num_layers, 12);
  EXPECT_EQ(c.num_heads, 12);
  EXPECT_EQ(c.num_kv_heads, 12);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.max_position_embeddings, 1024);
  EXPECT_EQ(c.activation, Activation::kGeluTanh);
  EXPECT_DOUBLE_EQ(c.rms_norm_eps, 1e-5);
  EXPECT_TRUE(c.tie_word_embeddings && c.layer_norm && c.learned_positions && !c.gated_mlp);
  EXPECT_TRUE(c.qkv_bias && c.o_bias && c.mlp_bias && !c.lm_head_bias);
  for (int64_t layer = 0; layer < c.num_layers; ++layer) {
    EXPECT_FALSE(c.layer_uses_rope(layer));
    EXPECT_EQ(c.layer_attention_scale(layer), 0.0);  // the default 1 / sqrt(head_dim)
  }
  const ModelConfig options = ModelConfig::from_json(
      "{" + gpt2 + R"(, "n_inner": 1000, "scale_attn_weights": false, "scale_attn_by_inverse_layer_idx": true})");
  EXPECT_EQ(options.intermediate_size, 1000);
  EXPECT_DOUBLE_EQ(options.layer_attention_scale(0), 1.0);
  EXPECT_DOUBLE_EQ(options.layer_attention_scale(3), 0.25);
  const ModelConfig by_layer =
      ModelConfig::from_json("{" + gpt2 + R"(, "scale_attn_by_inverse_layer_idx": true})");
  EXPECT_DOUBLE_EQ(by_layer.layer_attention_scale(1), 0.125 / 2);
  // transformers maps the usual names onto GPT-2's keys; a config written with them reads the same.
  const ModelConfig usual = ModelConfig::from_json(R"({"model_type": "gpt2", "vocab_size": 100, "hidden_size": 64,
      "num_hidden_layers": 2, "num_attention_heads": 4, "max_position_embeddings": 128})");
  EXPECT_EQ(usual.hidden_size, 64);
  EXPECT_EQ(usual.intermediate_size, 256);
  EXPECT_EQ(usual.max_position_embeddings, 128);
  for (const ModelConfig& written : {c, options, by_layer, usual})
    EXPECT_EQ(ModelConfig::from_json(written.to_json()).to_json(), written.to_json());
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json("{" + gpt2 + R"(, "add_cross_attention": true})");
            }).find("add_cross_attention"),
            std::string::npos);
}

// gpt-oss-20b's config.json as published: yarn in the older rope_scaling with rope_theta beside it, MXFP4 experts,
// alternating layer_types; and the defaults GptOssConfig fills in when keys are absent.
TEST(ConfigJson, GptOssReadsItsPublishedConfig) {
  const std::string sizes = R"("model_type": "gpt_oss", "vocab_size": 201088, "hidden_size": 2880,
      "intermediate_size": 2880, "num_hidden_layers": 24, "num_attention_heads": 64, "num_key_value_heads": 8,
      "head_dim": 64)";
  const ModelConfig published = ModelConfig::from_json("{" + sizes + R"(, "attention_bias": true,
      "max_position_embeddings": 131072, "num_local_experts": 32, "num_experts_per_tok": 4, "rms_norm_eps": 1e-05,
      "quantization_config": {"modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
        "model.embed_tokens", "lm_head"], "quant_method": "mxfp4"},
      "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0, "original_max_position_embeddings": 4096,
        "rope_type": "yarn", "truncate": false}, "rope_theta": 150000, "sliding_window": 128, "swiglu_limit": 7.0,
      "tie_word_embeddings": false})");
  const ModelConfig defaults = ModelConfig::from_json("{" + sizes + "}");
  for (const ModelConfig& c : {published, defaults}) {
    EXPECT_EQ(c.rope.type, RopeType::kYarn);
    EXPECT_DOUBLE_EQ(c.rope.theta, 150000);
    EXPECT_DOUBLE_EQ(c.rope.factor, 32);
    EXPECT_EQ(c.rope.original_max_position_embeddings, 4096);
    EXPECT_FALSE(c.rope.truncate);
    EXPECT_DOUBLE_EQ(c.rope.attention_factor, 0.1 * std::log(32.0) + 1.0);
    EXPECT_FALSE(c.sliding_rope.has_value());  // both kinds of layer rotate alike
    EXPECT_EQ(c.sliding_window, 128);
    EXPECT_EQ(c.layer_window(0), 128);
    EXPECT_EQ(c.layer_window(1), 0);
    EXPECT_TRUE(c.attention_sinks && c.qkv_bias && c.o_bias && c.norm_in_fp32 && !c.tie_word_embeddings);
    EXPECT_TRUE(c.expert_biases && c.router_scores == RouterScores::kSoftmaxOfChosen);
    EXPECT_EQ(c.moe_intermediate_size, 2880);
    EXPECT_EQ(c.experts_per_token, 4);
    EXPECT_DOUBLE_EQ(c.swiglu_alpha, 1.702);
    EXPECT_DOUBLE_EQ(c.swiglu_limit, 7.0);
    EXPECT_TRUE(c.has_window());  // windows: it gathers
    EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json());
  }
  EXPECT_EQ(published.num_experts, 32);
  EXPECT_EQ(defaults.num_experts, 128);
  EXPECT_EQ(defaults.max_position_embeddings, 2048);
  // Other quantizations, and MXFP4 on another family, are refused.
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json("{" + sizes + R"(, "quantization_config": {"quant_method": "hqq"}})");
            }).find("quant_method 'hqq'"),
            std::string::npos);
  EXPECT_THROW(ModelConfig::from_json(R"({"model_type": "llama", "vocab_size": 512, "hidden_size": 64,
      "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
      "quantization_config": {"quant_method": "mxfp4"}})"), std::invalid_argument);
  // Without windows (every layer full), cascade applies: the sinks join its merge.
  std::string all_full = R"("full_attention")";
  for (int i = 1; i < 24; ++i) all_full += R"(, "full_attention")";
  const ModelConfig full = ModelConfig::from_json("{" + sizes + R"(, "layer_types": [)" + all_full + "]}");
  EXPECT_FALSE(full.has_window());
}

// A multimodal checkpoint's config is its text model's: text_config (its model_type defaulted by the wrapper), the
// top level's tie_word_embeddings over the text model's, the vision tower's config not read.
TEST(ConfigJson, MultimodalCheckpointsReadTheirTextModel) {
  const std::string sizes = R"("vocab_size": 512, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
      "num_attention_heads": 4)";
  const ModelConfig mistral = ModelConfig::from_json(R"({"model_type": "mistral3", "tie_word_embeddings": true,
      "vision_config": {"model_type": "pixtral", "hidden_size": 16}, "text_config": {"tie_word_embeddings": false, )" +
                                                     sizes + "}}");
  EXPECT_EQ(mistral.model_type, "mistral");
  EXPECT_TRUE(mistral.tie_word_embeddings);
  EXPECT_EQ(mistral.hidden_size, 64);
  const ModelConfig gemma = ModelConfig::from_json(
      R"({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text", "tie_word_embeddings": false, )" + sizes +
      "}}");
  EXPECT_EQ(gemma.model_type, "gemma3_text");
  EXPECT_FALSE(gemma.tie_word_embeddings);
  EXPECT_NE(message_of<std::invalid_argument>([] { ModelConfig::from_json(R"({"model_type": "gemma3"})"); })
                .find("gemma3 text_config: config.json: required field 'vocab_size' is missing"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(R"({"model_type": "gemma3", "text_config": {"model_type": "gemma3", )" + sizes +
                                     "}}");
            }).find("text_config is itself multimodal"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(R"({"model_type": "mistral3", "text_config": {"model_type": "falcon", )" + sizes +
                                     "}}");
            }).find("mistral3 text_config: unsupported model_type 'falcon'"),
            std::string::npos);
}

// Laguna's options as named layer options: the gate per head or per element (gating), each layer's query heads, the
// router's soft cap and a scale of the experts' sum; what transformers does not run is refused by name.
TEST(ConfigJson, PerLayerHeadsGatesAndRouterOptions) {
  const std::string base = R"({"model_type": "laguna", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 96,
      "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
      "num_experts": 8, "num_experts_per_tok": 2, "moe_router_logit_softcapping": 3.0)";
  const ModelConfig per_head = ModelConfig::from_json(base + R"(, "num_attention_heads_per_layer": [4, 6, 2]})");
  EXPECT_TRUE(per_head.attention_head_gate);  // gating's default: per head
  EXPECT_FALSE(per_head.attention_output_gate);
  EXPECT_TRUE(per_head.attention_gate_softplus);
  EXPECT_EQ(per_head.layer_head_count(1), 6);
  EXPECT_EQ(per_head.router_logit_softcap, 3.0);
  EXPECT_TRUE(per_head.scaled_after_sum);
  EXPECT_EQ(ModelConfig::from_json(per_head.to_json()).to_json(), per_head.to_json());
  for (const char* per_element : {R"(false)", R"("per-element")"}) {
    const ModelConfig c = ModelConfig::from_json(base + R"(, "gating": )" + per_element + "}");
    EXPECT_TRUE(c.attention_output_gate) << per_element;
    EXPECT_FALSE(c.attention_head_gate) << per_element;
    EXPECT_EQ(ModelConfig::from_json(c.to_json()).attention_output_gate, true) << per_element;
  }
  EXPECT_TRUE(ModelConfig::from_json(base + R"(, "gating": "per-head"})").attention_head_gate);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(base + R"(, "num_attention_heads_per_layer": [4, 6]})");
            }).find("num_attention_heads_per_layer has 2 entries for 3 layers"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(base + R"(, "num_attention_heads_per_layer": [4, 3, 2]})");
            }).find("layer 1 has heads"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              ModelConfig::from_json(base + R"(, "moe_apply_router_weight_on_input": true})");
            }).find("'moe_apply_router_weight_on_input' true is not supported"),
            std::string::npos);
}

// Llama 4's keys as transformers' defaults fill them (every layer routed, every fourth without rope, the others
// chunked), the layer lists given, and its errors.
TEST(ConfigJson, Llama4ChunksNopeLayersAndInterleavedExperts) {
  const std::string base = R"({"model_type": "llama4_text", "vocab_size": 512, "hidden_size": 64,
      "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2)";
  const ModelConfig defaults = ModelConfig::from_json(base + "}");
  EXPECT_EQ(defaults.intermediate_size, 16384);
  EXPECT_EQ(defaults.moe_intermediate_size, 8192);
  EXPECT_EQ(defaults.shared_expert_intermediate_size, 8192);
  EXPECT_EQ(defaults.head_dim, 128);
  EXPECT_EQ(defaults.num_experts, 16);
  EXPECT_EQ(defaults.experts_per_token, 1);
  EXPECT_TRUE(defaults.router_weight_on_input);
  EXPECT_EQ(defaults.router_scores, RouterScores::kSigmoidOfChosen);
  EXPECT_FALSE(defaults.norm_topk_prob);
  for (int64_t i = 0; i < 4; ++i) EXPECT_TRUE(defaults.is_moe_layer(i)) << i;
  EXPECT_EQ(defaults.rope.theta, 500000.0);
  EXPECT_TRUE(defaults.interleaved_rope);
  EXPECT_FALSE(defaults.layer_uses_rope(3));
  EXPECT_TRUE(defaults.layer_uses_rope(2));
  EXPECT_EQ(defaults.dense_attention_limit, 8192);
  EXPECT_STREQ(defaults.dense_attention_limit_key, "attention_chunk_size");
  EXPECT_DOUBLE_EQ(defaults.query_temperature, 0.1);
  EXPECT_EQ(defaults.query_temperature_floor, 8192);
  EXPECT_EQ(ModelConfig::from_json(defaults.to_json()).to_json(), defaults.to_json());

  const ModelConfig given = ModelConfig::from_json(base + R"(, "interleave_moe_layer_step": 2, "use_qk_norm": false,
      "attn_temperature_tuning": false, "attention_chunk_size": null, "no_rope_layers": [1, 0, 1, 1]})");
  EXPECT_FALSE(given.is_moe_layer(0));
  EXPECT_TRUE(given.is_moe_layer(1));
  EXPECT_TRUE(given.is_moe_layer(3));
  EXPECT_FALSE(given.layer_uses_rope(1));
  EXPECT_EQ(given.dense_attention_limit, 0);
  EXPECT_EQ(given.query_temperature, 0);
  EXPECT_FALSE(given.qk_unit_norm);
  EXPECT_EQ(ModelConfig::from_json(given.to_json()).to_json(), given.to_json());
  const ModelConfig listed = ModelConfig::from_json(base + R"(, "moe_layers": [2], "attention_chunk_size": 64,
      "layer_types": ["full_attention", "full_attention", "full_attention", "chunked_attention"]})");
  EXPECT_TRUE(listed.is_moe_layer(2));
  EXPECT_FALSE(listed.is_moe_layer(1));
  EXPECT_EQ(listed.dense_attention_limit, 64);
  EXPECT_EQ(ModelConfig::from_json(base + R"(, "attention_chunk_size": 64, "layer_types": ["full_attention",
      "full_attention", "full_attention", "full_attention"]})").dense_attention_limit, 0);

  auto error = [&](const std::string& keys) {
    return message_of<std::invalid_argument>([&] { ModelConfig::from_json(base + keys + "}"); });
  };
  EXPECT_NE(error(R"(, "moe_layers": [4])").find("moe_layers names layer 4 of a model of 4 layers"), std::string::npos);
  EXPECT_NE(error(R"(, "interleave_moe_layer_step": 0)").find("interleave_moe_layer_step must be >= 1"),
            std::string::npos);
  EXPECT_NE(error(R"(, "floor_scale": 0)").find("floor_scale must be >= 1"), std::string::npos);
  EXPECT_NE(error(R"(, "layer_types": ["full_attention", "sliding_attention", "full_attention", "full_attention"])")
                .find("layer type 'sliding_attention'"),
            std::string::npos);
  EXPECT_NE(error(R"(, "layer_types": ["full_attention", "chunked_attention"])").find("layer_types has 2 entries for 4 layers"),
            std::string::npos);
  EXPECT_NE(error(R"(, "attention_chunk_size": null, "layer_types": ["chunked_attention", "full_attention",
      "full_attention", "full_attention"])").find("chunked_attention layers need attention_chunk_size"),
            std::string::npos);
}

// MiniMax M3's text model: transformers' defaults (every layer routed, none sparse), the older sparse_attention_config
// and moe_layer_freq read as transformers reads them, the sparse layers' reach as the dense attention limit.
TEST(ConfigJson, MiniMaxM3SparseLayersAndOlderKeys) {
  const std::string base = R"({"model_type": "minimax_m3_vl_text", "vocab_size": 512, "hidden_size": 64,
      "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "hidden_act": "swigluoai")";
  const ModelConfig defaults = ModelConfig::from_json(base + "}");
  EXPECT_EQ(defaults.intermediate_size, 12288);
  EXPECT_EQ(defaults.moe_intermediate_size, 3072);
  EXPECT_EQ(defaults.shared_expert_intermediate_size, 3072);
  EXPECT_FALSE(defaults.shared_expert_gated);
  EXPECT_EQ(defaults.num_experts, 128);
  EXPECT_EQ(defaults.experts_per_token, 4);
  EXPECT_DOUBLE_EQ(defaults.routed_scaling_factor, 2.0);
  EXPECT_TRUE(defaults.scaled_after_sum);
  EXPECT_TRUE(defaults.clamped_swiglu_mlps);
  EXPECT_DOUBLE_EQ(defaults.swiglu_limit, 7.0);
  EXPECT_EQ(defaults.activation, Activation::kSilu);
  for (int64_t i = 0; i < 3; ++i) EXPECT_TRUE(defaults.is_moe_layer(i)) << i;
  EXPECT_EQ(defaults.dense_attention_limit, 0);
  EXPECT_EQ(defaults.rope.theta, 5000000.0);
  EXPECT_EQ(ModelConfig::from_json(defaults.to_json()).to_json(), defaults.to_json());

  const ModelConfig older = ModelConfig::from_json(base + R"(, "moe_layer_freq": [0, 1, 1], "sparse_attention_config":
      {"sparse_attention_freq": [0, 1, 1], "sparse_block_size": 64, "sparse_topk_blocks": 4}})");
  EXPECT_FALSE(older.is_moe_layer(0));
  EXPECT_TRUE(older.is_moe_layer(1));
  EXPECT_EQ(older.dense_attention_limit, 256);
  EXPECT_STREQ(older.dense_attention_limit_key, "index_topk_blocks x index_block_size");
  const ModelConfig again = ModelConfig::from_json(older.to_json());
  EXPECT_EQ(again.dense_attention_limit, 256);
  EXPECT_FALSE(again.is_moe_layer(0));
  EXPECT_EQ(again.to_json(), older.to_json());

  auto error = [&](const std::string& keys) {
    return message_of<std::invalid_argument>([&] { ModelConfig::from_json(base + keys + "}"); });
  };
  EXPECT_NE(error(R"(, "layer_types": ["full_attention", "sliding_attention", "full_attention"])")
                .find("layer type 'sliding_attention'"),
            std::string::npos);
  EXPECT_NE(error(R"(, "layer_types": ["full_attention"])").find("layer_types has 1 entries for 3 layers"),
            std::string::npos);
  EXPECT_NE(error(R"(, "index_topk_blocks": 0, "layer_types": ["minimax_m3_sparse", "full_attention",
      "full_attention"])").find("index_topk_blocks 0 and index_block_size 128 must be >= 1"),
            std::string::npos);
}

// MiMo-V2-Flash's options: the first layer full beside every sixth, twice the kv heads on sliding layers, windows
// from sliding_window_size + 1, values narrower than the heads (never wider), a null value scale as 1.
TEST(ConfigJson, NarrowValuesAndSlidingLayerOptions) {
  const std::string base = R"({"model_type": "mimo_v2_flash", "vocab_size": 512, "hidden_size": 64,
      "intermediate_size": 96, "num_hidden_layers": 7, "num_attention_heads": 4, "num_key_value_heads": 1,
      "head_dim": 20, "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 8)";
  const ModelConfig c = ModelConfig::from_json(base + R"(, "v_head_dim": 12, "sliding_window_size": 31})");
  for (const int64_t full : {0, 5}) EXPECT_EQ(c.layer_window(full), 0) << full;
  for (const int64_t sliding : {1, 4, 6}) EXPECT_EQ(c.layer_window(sliding), 32) << sliding;
  EXPECT_EQ(c.layer_kv_head_count(0), 1);
  EXPECT_EQ(c.layer_kv_head_count(1), 2);
  EXPECT_EQ(c.value_head_dim, 12);
  EXPECT_DOUBLE_EQ(c.value_multiplier, 0.707);
  EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json());
  EXPECT_DOUBLE_EQ(
      ModelConfig::from_json(base + R"(, "v_head_dim": 12, "attention_value_scale": null})").value_multiplier, 1.0);
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json(base + R"(, "v_head_dim": 24})"); })
                .find("value heads of 24 values are wider than layer 0's heads of 20"),
            std::string::npos);
}

// Sliding layers without a window (Arcee Trinity's, Command A's): transformers cannot run them, so they are refused by
// name rather than served with every layer rotating (or none).
TEST(ConfigJson, SlidingLayersWithoutAWindowAreRefusedWhereTransformersRefusesThem) {
  const std::string base = R"({"model_type": "afmoe", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 96,
      "moe_intermediate_size": 8, "num_hidden_layers": 4, "num_attention_heads": 4, "num_experts": 4,
      "num_experts_per_tok": 2, "global_attn_every_n_layers": 2)";
  const ModelConfig windowed = ModelConfig::from_json(base + R"(, "sliding_window": 16})");
  EXPECT_TRUE(windowed.layer_uses_rope(0));
  EXPECT_FALSE(windowed.layer_uses_rope(1));
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json(base + R"(, "sliding_window": null})"); })
                .find("sliding_attention layers with sliding_window null are not supported"),
            std::string::npos);
  const std::string command_a = R"({"model_type": "cohere2", "vocab_size": 512, "hidden_size": 64,
      "intermediate_size": 96, "num_hidden_layers": 4, "num_attention_heads": 4, "sliding_window": null})";
  EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json(command_a); }).find("sliding_window null"),
            std::string::npos);
  // Every family with sliding layers alike (transformers' sliding mask refuses them all); without sliding layers a
  // null window is no window.
  const std::string sizes = R"("vocab_size": 512, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 4,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "sliding_window": null)";
  for (const char* type : {"gemma2", "gemma3_text", "olmo3", "exaone4"}) {
    const std::string config = std::string(R"({"model_type": ")") + type + R"(", )" + sizes + "}";
    EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json(config); }).find("sliding_window null"),
              std::string::npos) << type;
  }
  EXPECT_FALSE(ModelConfig::from_json(R"({"model_type": "gemma3_text", )" + sizes +
                                      R"(, "layer_types": ["full_attention", "full_attention", "full_attention",
                                      "full_attention"]})").has_window());
  EXPECT_FALSE(ModelConfig::from_json(R"({"model_type": "mistral", )" + sizes + "}").has_window());
}

// Cohere 2 MoE's own keys: their values outside what transformers accepts are refused by name.
TEST(ConfigJson, CohereMoeKeysOutsideTheirValuesAreRefused) {
  const std::string base = R"({"model_type": "cohere2_moe", "vocab_size": 512, "hidden_size": 64,
      "intermediate_size": 24, "num_hidden_layers": 3, "num_attention_heads": 4, "head_dim": 16, "sliding_window": 16,
      "num_shared_experts": 1)";
  const ModelConfig c = ModelConfig::from_json(base + "}");
  EXPECT_TRUE(c.shared_expert_averaged);
  EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json());
  for (const auto& entry : std::vector<std::pair<std::string, std::string>>{
           {R"("expert_selection_fn": "tanh")", "expert_selection_fn 'tanh' (softmax or sigmoid)"},
           {R"("shared_expert_combination_strategy": "max")", "shared_expert_combination_strategy 'max'"},
           {R"("prefix_dense_sliding_window_pattern": 0)", "must be >= 1"}}) {
    const std::string config = base + ", " + entry.first + "}";
    EXPECT_NE(message_of<std::invalid_argument>([&] { ModelConfig::from_json(config); }).find(entry.second),
              std::string::npos)
        << entry.first;
  }
}

}  // namespace
}  // namespace prefix_scorer::test
