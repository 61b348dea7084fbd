#pragma once

#include <ATen/ATen.h>

namespace prefix_scorer {

// One projection of a layer: x @ weight^T + bias. Every projection the layers run is one, and `linear` is the one
// call that runs them, so that a weight kept in another form than a plain [out, in] tensor of the model's dtype
// has one place to be read. Today every weight is dense.
struct Linear {
  at::Tensor weight;  // [out, in]; undefined: the layer has no such projection
  at::Tensor bias;    // [out]; undefined: none

  bool defined() const { return weight.defined(); }
};

// x @ l.weight^T + l.bias, as at::linear. On the CPU in fp32 through oneDNN's matmul (the op torch's own CPU
// compiler emits), which on AVX2 machines takes a decode step's few rows 1.5x to 2.5x faster than MKL's sgemm that
// at::linear calls (docs/performance.md, "A step's time on an AMD AVX2 CPU"); anywhere else, and where the torch
// in use was built without oneDNN, at::linear itself. The two differ only in the rounding of their sums.
at::Tensor linear(const at::Tensor& x, const Linear& l);

// Whether linear takes oneDNN's path for these operands.
bool linear_by_onednn(const at::Tensor& x, const at::Tensor& weight);

}  // namespace prefix_scorer
