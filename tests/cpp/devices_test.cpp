// Device and dtype names, and the placement of layers over a device list.

#include "test_support.h"

#include "model/checkpoint/checkpoint_layout.h"
#include "model/checkpoint/weights.h"

#include <gtest/gtest.h>

namespace prefix_scorer::test {
namespace {

TEST(Devices, NamesAndPlacement) {
  EXPECT_EQ(parse_device("cpu"), c10::Device(c10::kCPU));
  EXPECT_THROW(parse_device("gpu"), std::invalid_argument);
  EXPECT_THROW(parse_device("cuda:x"), std::invalid_argument);
  if (!at::hasCUDA()) EXPECT_THROW(parse_device("cuda:0"), std::invalid_argument);
  EXPECT_EQ(parse_dtype("bf16"), at::kBFloat16);
  EXPECT_THROW(parse_dtype("int8"), std::invalid_argument);

}

TEST(Devices, LayersSplitIntoBlocksBalancedByBytes) {
  const c10::Device a(c10::kCPU), b(c10::kCUDA, 0), c(c10::kCUDA, 1);
  using Placement = std::vector<c10::Device>;
  // Equal layers, nothing else: near-equal blocks, the earlier ones larger.
  EXPECT_EQ(place_layers({a, b}, {{1, 1, 1, 1, 1}, 0, 0}), (Placement{a, a, a, b, b}));
  // The embeddings on the first device and the output layer on the last take the place of layers.
  EXPECT_EQ(place_layers({a, b}, {{10, 10, 10, 10, 10, 10, 10, 10}, 40, 20}), (Placement{a, a, a, b, b, b, b, b}));
  EXPECT_EQ(place_layers({a, b, c}, {std::vector<int64_t>(9, 10), 25, 25}),
            (Placement{a, a, b, b, b, b, b, c, c}));
  // Layers of different sizes (dense and mixture-of-experts layers alternating).
  EXPECT_EQ(place_layers({a, b}, {{5, 20, 5, 20, 5, 20}, 0, 0}), (Placement{a, a, a, b, b, b}));
  EXPECT_EQ(place_layers({a, b}, {{5, 5, 5, 5, 40}, 0, 0}), (Placement{a, a, a, a, b}));
  // One device: every layer on it. A device listed twice holds two blocks.
  EXPECT_EQ(place_layers({b}, {{3, 1}, 7, 7}), (Placement{b, b}));
  EXPECT_EQ(place_layers({a, b, a}, {{1, 1, 1}, 0, 0}), (Placement{a, b, a}));
  EXPECT_THROW(place_layers({a, b, a}, {{1, 1}, 0, 0}), std::invalid_argument);
  EXPECT_THROW(place_layers({}, {{1}, 0, 0}), std::invalid_argument);
}

TEST(Devices, WeightBytesCountEveryTensorWhereItFalls) {
  for (const char* name : {"tiny", "tiny-moe", "tiny-gemma2"}) {
    const ModelConfig config = ModelConfig::synthetic(name);
    const Model model = Model::synthetic(name);
    const WeightBytes bytes = weight_bytes(config, model_layout(config), at::kBFloat16);
    ASSERT_EQ(static_cast<int64_t>(bytes.layers.size()), config.num_layers);
    int64_t total = bytes.first + bytes.last;
    for (const int64_t layer : bytes.layers) total += layer;
    const int64_t tied_copy = config.tie_word_embeddings ? bytes.first : 0;
    EXPECT_EQ(total - tied_copy, model.num_parameters() * 2) << name;
    EXPECT_GT(bytes.first, 0) << name;
    EXPECT_GT(bytes.last, 0) << name;
  }
}

}  // namespace
}  // namespace prefix_scorer::test
