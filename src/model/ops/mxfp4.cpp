#include "model/ops/mxfp4.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

namespace prefix_scorer {
namespace {

// E2M1: the magnitudes of codes 0-7; codes 8-15 are their negatives.
constexpr float kFp4Values[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                  -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

}  // namespace

std::vector<int64_t> mxfp4_dequantized_shape(const std::vector<int64_t>& blocks, const std::vector<int64_t>& scales) {
  const bool pairs = blocks.size() >= 3 && blocks.back() == 16 &&
                     std::vector<int64_t>(blocks.begin(), blocks.end() - 1) == scales;
  if (!pairs)
    throw std::invalid_argument(fmt::format("MXFP4 blocks [{}] and scales [{}] do not pair (blocks [..., rows, "
                                            "groups, 16], scales [..., rows, groups])", fmt::join(blocks, ", "),
                                            fmt::join(scales, ", ")));
  std::vector<int64_t> shape(blocks.begin(), blocks.end() - 3);
  shape.push_back(blocks[blocks.size() - 2] * 32);
  shape.push_back(blocks[blocks.size() - 3]);
  return shape;
}

at::Tensor fp4_values(const at::Tensor& bytes) {
  const at::Tensor lut = at::tensor(at::ArrayRef<float>(kFp4Values, 16), at::kFloat).to(bytes.device());
  const at::Tensor low = lut.index_select(0, at::bitwise_and(bytes, 0x0F).to(at::kLong).reshape(-1));
  const at::Tensor high = lut.index_select(0, at::bitwise_right_shift(bytes, 4).to(at::kLong).reshape(-1));
  std::vector<int64_t> pairs = bytes.sizes().vec();
  pairs.push_back(2);
  return at::stack({low, high}, -1).view(pairs).flatten(-2);
}

at::Tensor dequantize_mxfp4_rows(const at::Tensor& blocks, const at::Tensor& scales) {
  const at::Tensor values = fp4_values(blocks);  // [..., rows, groups, 32]
  return at::ldexp(values, (scales.to(at::kInt) - 127).unsqueeze(-1)).flatten(-2);
}

at::Tensor dequantize_mxfp4(const at::Tensor& blocks, const at::Tensor& scales) {
  mxfp4_dequantized_shape(blocks.sizes().vec(), scales.sizes().vec());
  if (blocks.scalar_type() != at::kByte || scales.scalar_type() != at::kByte)
    throw std::invalid_argument("MXFP4 blocks and scales must be uint8");
  return dequantize_mxfp4_rows(blocks, scales).transpose(-1, -2).contiguous();
}

}  // namespace prefix_scorer
