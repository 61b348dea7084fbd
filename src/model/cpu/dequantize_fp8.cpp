// FP8 values in blocks, dequantized as one pass on the CPU: each byte's float (a 256-entry table) times its block's
// scale in fp32, as the ATen ops compute it, then the output dtype.

#include "model/ops/fp8_weight.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <c10/util/Float8_e4m3fn.h>

#include <algorithm>
#include <array>
#include <cstdint>

namespace prefix_scorer::cpu {
namespace {

std::array<float, 256> e4m3_table() {
  std::array<float, 256> table{};
  for (int b = 0; b < 256; ++b)
    table[b] = static_cast<float>(c10::Float8_e4m3fn(static_cast<uint8_t>(b), c10::Float8_e4m3fn::from_bits()));
  return table;
}

}  // namespace

at::Tensor dequantize_fp8(const at::Tensor& values, const at::Tensor& scales, std::array<int64_t, 2> block,
                          at::ScalarType dtype) {
  static const std::array<float, 256> table = e4m3_table();
  const at::Tensor bytes = values.contiguous().view(at::kByte), grid = scales.to(at::kFloat).contiguous();
  at::Tensor out = at::empty(values.sizes(), at::TensorOptions().dtype(dtype));
  const int64_t rows = values.size(-2), cols = values.size(-1);
  const int64_t grid_rows = grid.size(-2), grid_cols = grid.size(-1), matrices = values.numel() / (rows * cols);
  const uint8_t* codes = bytes.data_ptr<uint8_t>();
  const float* scale = grid.data_ptr<float>();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, dtype, "dequantize_fp8", [&] {
    scalar_t* result = out.data_ptr<scalar_t>();
    at::parallel_for(0, matrices * rows, 8, [&](int64_t begin, int64_t end) {
      for (int64_t mr = begin; mr < end; ++mr) {
        const int64_t m = mr / rows, r = mr % rows;
        const float* row_scales = scale + (m * grid_rows + r / block[0]) * grid_cols;
        const uint8_t* row = codes + mr * cols;
        scalar_t* row_out = result + mr * cols;
        for (int64_t g = 0; g < grid_cols; ++g) {
          const float s = row_scales[g];
          const int64_t last = std::min(cols, (g + 1) * block[1]);
          for (int64_t c = g * block[1]; c < last; ++c) row_out[c] = static_cast<scalar_t>(table[row[c]] * s);
        }
      }
    });
  });
  return out;
}

}  // namespace prefix_scorer::cpu
