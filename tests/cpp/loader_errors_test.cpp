// Checkpoint loading: on-disk dtypes, shards, and clear errors for broken checkpoints.

#include "test_support.h"

#include "model/checkpoint/block_fp8.h"
#include "model/ops/mxfp4.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace prefix_scorer::test {
namespace {

std::map<std::string, at::Tensor> fixture_tensors(const std::string& name) {
  const SafetensorsFile file(model_dir(name) + "/model.safetensors");
  std::map<std::string, at::Tensor> tensors;
  for (const auto& [tensor, info] : file.tensors()) tensors[tensor] = file.load(tensor);
  return tensors;
}

// A copy of a fixture (llama3 by default) whose weights are `tensors`.
std::string checkpoint_with(const std::map<std::string, at::Tensor>& tensors, const std::string& tag,
                            const std::string& fixture = "llama3") {
  const std::string dir = make_temp_dir(tag);
  copy_model(fixture, dir);
  write_safetensors(dir + "/model.safetensors", tensors);
  return dir;
}

const TokenIds kTokens{5, 17, 300, 42, 42, 9, 111, 0, 256};

TEST(Loader, MissingTensorIsNamed) {
  auto tensors = fixture_tensors("llama3");
  tensors.erase("model.layers.1.mlp.up_proj.weight");
  const std::string dir = checkpoint_with(tensors, "missing");
  const std::string message = message_of<std::runtime_error>([&] { Model::load(dir); });
  EXPECT_NE(message.find("model.layers.1.mlp.up_proj.weight"), std::string::npos) << message;
}

TEST(Loader, WrongShapeIsNamed) {
  auto tensors = fixture_tensors("llama3");
  tensors["model.layers.2.self_attn.k_proj.weight"] = at::zeros({16, 64});
  const std::string dir = checkpoint_with(tensors, "shape");
  const std::string message = message_of<std::runtime_error>([&] { Model::load(dir); });
  EXPECT_NE(message.find("model.layers.2.self_attn.k_proj.weight"), std::string::npos) << message;
  EXPECT_NE(message.find("[16, 64]"), std::string::npos) << message;
}

TEST(Loader, UnknownModelTypeIsNamed) {
  const std::string dir = model_with_config_edit("llama3", "\"llama\"", "\"falcon\"");
  const std::string message = message_of<std::invalid_argument>([&] { Model::load(dir); });
  EXPECT_NE(message.find("'falcon'"), std::string::npos) << message;
}

TEST(Loader, TruncatedSafetensorsIsReported) {
  const std::string dir = make_temp_dir("truncated");
  copy_model("llama3", dir);
  const std::string path = dir + "/model.safetensors";
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 1000);
  const std::string message = message_of<std::runtime_error>([&] { Model::load(dir); });
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  std::filesystem::resize_file(path, 5);
  EXPECT_NE(message_of<std::runtime_error>([&] { Model::load(dir); }).find("malformed"), std::string::npos);
  write_text(path, std::string("\x10\0\0\0\0\0\0\0{not json at all", 24));
  EXPECT_NE(message_of<std::runtime_error>([&] { Model::load(dir); }).find("not valid JSON"), std::string::npos);
}

TEST(Loader, MissingFilesAreReported) {
  const std::string dir = make_temp_dir("empty");
  EXPECT_THROW(Model::load(dir), std::runtime_error);
  write_text(dir + "/config.json", "{}");
  EXPECT_THROW(Model::load(dir), std::invalid_argument);
  copy_model("llama3", dir);
  std::filesystem::remove(dir + "/model.safetensors");
  EXPECT_NE(message_of<std::runtime_error>([&] { Model::load(dir); }).find("model.safetensors"), std::string::npos);
}

TEST(Loader, HalfPrecisionOnDiskLoadsAsFloat32) {
  const Model reference = Model::load(model_dir("llama3"));
  for (const auto dtype : {at::kBFloat16, at::kHalf}) {
    auto tensors = fixture_tensors("llama3");
    for (auto& [name, tensor] : tensors) tensor = tensor.to(dtype);
    const Model model = Model::load(checkpoint_with(tensors, "half"));
    // Same values rounded to 8 or 11 mantissa bits: the log-probs move by that rounding only. Measured: 3.4e-3 (bf16)
    // and 3.4e-4 (fp16) at most over every position and token; the bounds are about twice that.
    const double diff = (full_logprobs(model, kTokens) - full_logprobs(reference, kTokens)).abs().max().item<double>();
    EXPECT_LT(diff, dtype == at::kBFloat16 ? 7e-3 : 7e-4) << c10::toString(dtype);
    EXPECT_GT(diff, 0.0) << c10::toString(dtype);
  }
}

TEST(Loader, ShardedCheckpointEqualsSingleFile) {
  const auto tensors = fixture_tensors("llama3");
  const std::string dir = make_temp_dir("sharded");
  copy_model("llama3", dir);
  std::filesystem::remove(dir + "/model.safetensors");
  std::map<std::string, at::Tensor> shards[2];
  std::string index = R"({"metadata": {}, "weight_map": {)";
  int i = 0;
  for (const auto& [name, tensor] : tensors) {
    const int shard = i++ % 2;
    shards[shard][name] = tensor;
    index += (i > 1 ? ", \"" : "\"") + name + "\": \"model-0000" + std::to_string(shard + 1) + "-of-00002.safetensors\"";
  }
  write_text(dir + "/model.safetensors.index.json", index + "}}");
  write_safetensors(dir + "/model-00001-of-00002.safetensors", shards[0]);
  write_safetensors(dir + "/model-00002-of-00002.safetensors", shards[1]);
  const Model sharded = Model::load(dir);
  const Model single = Model::load(model_dir("llama3"));
  EXPECT_TRUE(at::equal(full_logprobs(sharded, kTokens), full_logprobs(single, kTokens)));

  std::filesystem::remove(dir + "/model-00002-of-00002.safetensors");
  EXPECT_NE(message_of<std::runtime_error>([&] { Model::load(dir); }).find("model-00002-of-00002"),
            std::string::npos);
}

// MXFP4 by hand: byte 0x92 holds codes 2 (low nibble, 1.0) and 9 (high, -0.5); scale 128 doubles them, 126 halves.
TEST(Loader, Mxfp4BlocksDequantizeExactly) {
  at::Tensor blocks = at::zeros({1, 2, 1, 16}, at::kByte);  // [experts, rows, groups, 16]
  blocks[0][0][0][0] = 0x92;
  blocks[0][1][0][15] = 0x7F;  // codes 15 (-6) and 7 (6): the row's last two values
  const at::Tensor scales = at::tensor({int64_t{128}, int64_t{126}}, at::kLong).to(at::kByte).view({1, 2, 1});
  const at::Tensor out = dequantize_mxfp4(blocks, scales);  // [experts, 32, rows]
  ASSERT_EQ(out.sizes(), at::IntArrayRef({1, 32, 2}));
  EXPECT_EQ(out[0][0][0].item<float>(), 2.0f);
  EXPECT_EQ(out[0][1][0].item<float>(), -1.0f);
  EXPECT_EQ(out[0][30][1].item<float>(), -3.0f);
  EXPECT_EQ(out[0][31][1].item<float>(), 3.0f);
  EXPECT_EQ(out.abs().sum().item<float>(), 9.0f);  // nothing else
  const std::string message = message_of<std::invalid_argument>([&] { dequantize_mxfp4(blocks, scales.view({1, 1, 2})); });
  EXPECT_NE(message.find("do not pair"), std::string::npos) << message;
}

// A gpt_oss checkpoint may store each expert projection as MXFP4 blocks and scales beside its name; a pair that
// does not dequantize to the tensor's shape is named.
TEST(Loader, Mxfp4ExpertsOfTheWrongShapeAreNamed) {
  auto tensors = fixture_tensors("gpt_oss");
  const std::string name = "model.layers.1.mlp.experts.down_proj";  // [4, 32, 64]: blocks [4, 64, 1, 16]
  tensors.erase(name);
  tensors[name + "_blocks"] = at::zeros({4, 64, 1, 16}, at::kByte);
  tensors[name + "_scales"] = at::full({4, 64, 1}, 127, at::kByte);
  const std::string dir = checkpoint_with(tensors, "mxfp4", "gpt_oss");
  EXPECT_NO_THROW(Model::load(dir));
  tensors[name + "_blocks"] = at::zeros({4, 64, 2, 16}, at::kByte);
  tensors[name + "_scales"] = at::full({4, 64, 2}, 127, at::kByte);
  write_safetensors(dir + "/model.safetensors", tensors);
  const std::string message = message_of<std::runtime_error>([&] { Model::load(dir); });
  EXPECT_NE(message.find(name), std::string::npos) << message;
  EXPECT_NE(message.find("[4, 64, 64]"), std::string::npos) << message;
}

// Block-FP8 by hand: each value times its block's scale, the last blocks partial (a 3 x 5 weight in blocks of 2 x 2).
TEST(Loader, BlockFp8DequantizesByBlock) {
  const at::Tensor values = at::arange(15, at::kFloat).view({3, 5});  // small integers: exact in e4m3
  const at::Tensor scales = at::tensor({1.0f, 2.0f, 4.0f, 0.5f, 0.25f, 8.0f}).view({2, 3});
  const at::Tensor out = dequantize_block_fp8(values.to(at::kFloat8_e4m3fn), scales, {2, 2});
  EXPECT_EQ(out[0][0].item<float>(), 0.0f);
  EXPECT_EQ(out[1][1].item<float>(), 6.0f * 1.0f);
  EXPECT_EQ(out[0][2].item<float>(), 2.0f * 2.0f);
  EXPECT_EQ(out[1][4].item<float>(), 9.0f * 4.0f);
  EXPECT_EQ(out[2][0].item<float>(), 10.0f * 0.5f);
  EXPECT_EQ(out[2][3].item<float>(), 13.0f * 0.25f);
  EXPECT_EQ(out[2][4].item<float>(), 14.0f * 8.0f);
  const std::string message =
      message_of<std::invalid_argument>([&] { dequantize_block_fp8(values.to(at::kFloat8_e4m3fn), scales, {2, 3}); });
  EXPECT_NE(message.find("needs scales [2, 2], got [2, 3]"), std::string::npos) << message;
}

// A float8 tensor without its scales, or without a block-FP8 config, is named; so is a scale grid that does not
// fit. With both, the checkpoint loads to the weights it dequantizes to.
TEST(Loader, BlockFp8WeightsNeedTheirScalesAndConfig) {
  auto tensors = fixture_tensors("llama3");
  const std::string name = "model.layers.0.mlp.down_proj.weight";  // [64, 160]
  const at::Tensor scales = at::full({4, 10}, 0.5f);
  tensors[name] = (tensors[name] * 2).to(at::kFloat8_e4m3fn);
  const std::string dir = checkpoint_with(tensors, "fp8");
  std::string message = message_of<std::runtime_error>([&] { Model::load(dir); });
  EXPECT_NE(message.find(name + "' is float8_e4m3fn without a block-FP8 quantization_config"), std::string::npos)
      << message;
  std::string config = read_text(dir + "/config.json");
  config.insert(config.find('{') + 1, R"("quantization_config": {"quant_method": "fp8", "weight_block_size": [16, 16]}, )");
  write_text(dir + "/config.json", config);
  message = message_of<std::runtime_error>([&] { Model::load(dir); });
  EXPECT_NE(message.find("without '" + name + "_scale_inv' beside it"), std::string::npos) << message;
  tensors[name + "_scale_inv"] = at::full({4, 9}, 0.5f);
  write_safetensors(dir + "/model.safetensors", tensors);
  message = message_of<std::runtime_error>([&] { Model::load(dir); });
  EXPECT_NE(message.find("expected [4, 10]"), std::string::npos) << message;
  tensors[name + "_scale_inv"] = scales;
  write_safetensors(dir + "/model.safetensors", tensors);
  const Model quantized = Model::load(dir);
  auto rounded = fixture_tensors("llama3");
  rounded[name] = (rounded[name] * 2).to(at::kFloat8_e4m3fn).to(at::kFloat) * 0.5f;
  const Model reference = Model::load(checkpoint_with(rounded, "fp8_reference"));
  EXPECT_TRUE(at::equal(full_logprobs(quantized, kTokens), full_logprobs(reference, kTokens)));
  const std::string per_tensor = model_with_config_edit("llama3", "{", R"({"quantization_config": {"quant_method": "fp8"}, )");
  message = message_of<std::invalid_argument>([&] { Model::load(per_tensor); });
  EXPECT_NE(message.find("per-tensor FP8"), std::string::npos) << message;
}

// GPT-2's original checkpoints save the base model alone: no "transformer." prefix, and the attention's mask
// buffers beside the weights. transformers loads them into GPT2LMHeadModel; so does the loader.
TEST(Loader, BaseModelCheckpointWithoutItsPrefixLoads) {
  std::map<std::string, at::Tensor> bare;
  for (const auto& [name, tensor] : fixture_tensors("gpt2")) bare[name.substr(std::string("transformer.").size())] = tensor;
  bare["h.0.attn.bias"] = at::ones({1, 1, 256, 256}).tril();
  const Model model = Model::load(checkpoint_with(bare, "bare", "gpt2"));
  EXPECT_TRUE(at::equal(full_logprobs(model, kTokens), full_logprobs(Model::load(model_dir("gpt2")), kTokens)));
}

// Learned positions end at max_position_embeddings (256 in the gpt2 fixture): a longer forward or a longer scoring
// window is refused by name, not read past the table.
TEST(Loader, LearnedPositionsEndAtTheirTable) {
  const auto model = std::make_shared<const Model>(Model::load(model_dir("gpt2")));
  TokenIds tokens(256, 7);
  EXPECT_EQ(full_logprobs(*model, tokens).size(0), 256);
  tokens.push_back(7);
  const std::string message = message_of<std::invalid_argument>([&] { full_logprobs(*model, tokens); });
  EXPECT_NE(message.find("position 256 is outside the model's 256 learned positions"), std::string::npos) << message;
  PrefixScorerOptions options;
  options.max_length = 257;
  EXPECT_NE(message_of<std::invalid_argument>([&] { PrefixScorer(model, options); }).find("max_length 257"),
            std::string::npos);
  options.max_length = 256;
  EXPECT_NO_THROW(PrefixScorer(model, options));
  options.max_length = 4096;  // rope models have no table to run past
  EXPECT_NO_THROW(PrefixScorer(std::make_shared<const Model>(Model::load(model_dir("llama3"))), options));
}

}  // namespace
}  // namespace prefix_scorer::test
