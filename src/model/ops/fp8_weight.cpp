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

at::Tensor dequantize(const Fp8Weight& w, at::ScalarType dtype) {
  return dequantize_blocks(w.values, w.scales, w.block).to(dtype);
}

}  // namespace prefix_scorer
