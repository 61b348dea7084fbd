// The parsers of files from strangers, free of libtorch (they also run under sanitizers): the safetensors header
// and config.json. Every malformed input is a clear error, never a crash or a silently wrong size.

#include "prefix_scorer/model_config.h"
#include "safetensors_header.h"
#include "test_basics.h"

#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
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
  EXPECT_NE(error(R"({"model_type": "llama", "vocab_size": 18446744073709551615})").find("out of range"),
            std::string::npos);
}

TEST(ConfigJson, AnIntegerWrittenAsAFloatIsRead) {
  const ModelConfig c = ModelConfig::from_json(R"({"model_type": "llama", "vocab_size": 512, "hidden_size": 64,
    "intermediate_size": 160, "num_hidden_layers": 2, "num_attention_heads": 4, "max_position_embeddings": 4096.0})");
  EXPECT_EQ(c.max_position_embeddings, 4096);
}

}  // namespace
}  // namespace prefix_scorer::test
