#include "model/ops/fp8_weight.h"

namespace prefix_scorer {

int64_t Fp8Weight::bytes() const { return static_cast<int64_t>(values.nbytes() + scales.nbytes()); }

at::Tensor dequantize_blocks(const at::Tensor& values, const at::Tensor& scales, std::array<int64_t, 2> block) {
  const int64_t rows = values.size(-2), cols = values.size(-1);
  const at::Tensor expanded = scales.to(at::kFloat)
                                  .repeat_interleave(block[0], -2)
                                  .narrow(-2, 0, rows)
                                  .repeat_interleave(block[1], -1)
                                  .narrow(-1, 0, cols);
  return values.to(at::kFloat) * expanded;
}

Fp8Weight quantize_fp8_blocks(const at::Tensor& weight, std::array<int64_t, 2> block) {
  const int64_t rows = weight.size(0), cols = weight.size(1);
  const int64_t grid_rows = (rows + block[0] - 1) / block[0], grid_cols = (cols + block[1] - 1) / block[1];
  const at::Tensor padded =
      at::constant_pad_nd(weight.to(at::kFloat), {0, grid_cols * block[1] - cols, 0, grid_rows * block[0] - rows});
  const at::Tensor scales =
      padded.view({grid_rows, block[0], grid_cols, block[1]}).abs().amax({1, 3}).clamp_min(1e-12) / 448;
  const at::Tensor ones = at::ones_like(weight, at::kFloat);
  const at::Tensor values = (weight.to(at::kFloat) / dequantize_blocks(ones, scales, block)).to(at::kFloat8_e4m3fn);
  return {values, scales, block};
}

at::Tensor dequantize_blocks(const at::Tensor& values, const at::Tensor& scales, std::array<int64_t, 2> block,
                             at::ScalarType dtype) {
  if (values.is_cpu() && (dtype == at::kFloat || dtype == at::kBFloat16 || dtype == at::kHalf))
    return cpu::dequantize_fp8(values, scales, block, dtype);
  return dequantize_blocks(values, scales, block).to(dtype);
}

at::Tensor dequantize(const Fp8Weight& w, at::ScalarType dtype) { return dequantize_blocks(w.values, w.scales, w.block, dtype); }

}  // namespace prefix_scorer
