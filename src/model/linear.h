#pragma once

#include <ATen/ATen.h>

namespace prefix_scorer {

// x @ weight^T + bias, as at::linear. On the CPU in fp32 through oneDNN's matmul (the op torch's own CPU compiler
// emits), which on AVX2 machines takes a decode step's few rows 1.5x to 2.5x faster than MKL's sgemm that
// at::linear calls (docs/performance.md, "A step's time on an AMD AVX2 CPU"); anywhere else, and where the torch
// in use was built without oneDNN, at::linear itself. The two differ only in the rounding of their sums.
at::Tensor apply_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});

// Whether apply_linear takes oneDNN's path for these operands.
bool linear_by_onednn(const at::Tensor& x, const at::Tensor& weight);

}  // namespace prefix_scorer
