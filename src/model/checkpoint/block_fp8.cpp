#include "model/checkpoint/block_fp8.h"

#include "model/ops/fp8_weight.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

namespace prefix_scorer {

std::vector<int64_t> block_fp8_scale_shape(const std::vector<int64_t>& shape, std::array<int64_t, 2> block) {
  if (shape.size() < 2 || block[0] < 1 || block[1] < 1)
    throw std::invalid_argument(fmt::format("block-FP8 weight [{}] in blocks of [{}] is not a matrix of blocks",
                                            fmt::join(shape, ", "), fmt::join(block, ", ")));
  std::vector<int64_t> grid(shape.begin(), shape.end() - 2);
  grid.push_back((shape[shape.size() - 2] + block[0] - 1) / block[0]);
  grid.push_back((shape.back() + block[1] - 1) / block[1]);
  return grid;
}

at::Tensor dequantize_block_fp8(const at::Tensor& weight, const at::Tensor& scale_inv, std::array<int64_t, 2> block) {
  const std::vector<int64_t> shape = weight.sizes().vec(), grid = block_fp8_scale_shape(shape, block);
  if (scale_inv.sizes().vec() != grid)
    throw std::invalid_argument(fmt::format("block-FP8 weight [{}] in blocks of [{}] needs scales [{}], got [{}]",
                                            fmt::join(shape, ", "), fmt::join(block, ", "), fmt::join(grid, ", "),
                                            fmt::join(scale_inv.sizes(), ", ")));
  if (weight.scalar_type() != at::kFloat8_e4m3fn)
    throw std::invalid_argument(fmt::format("block-FP8 weight has dtype {}, expected float8_e4m3fn",
                                            c10::toString(weight.scalar_type())));
  return dequantize_blocks(weight, scale_inv, block);
}

}  // namespace prefix_scorer
