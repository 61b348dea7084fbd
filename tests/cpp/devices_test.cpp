// Device and dtype names, and the placement of layers over a device list.

#include "test_support.h"

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

  const c10::Device a(c10::kCPU), b(c10::kCUDA, 0);
  const auto placement = place_layers({a, b}, 5);
  const std::vector<c10::Device> expected{a, a, a, b, b};
  EXPECT_EQ(placement, expected);
  EXPECT_THROW(place_layers({a, b, a}, 2), std::invalid_argument);
}

}  // namespace
}  // namespace prefix_scorer::test
