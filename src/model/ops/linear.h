#pragma once

#include "model/ops/fp8_weight.h"
#include "model/ops/integer_weight.h"
#include "model/ops/quantized_experts.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace prefix_scorer {

// One projection of a layer: x @ weight^T + bias. Every projection the layers run is one, and `linear` is the one
// call that runs them: its weight a plain [out, in] tensor of the model's dtype, or kept as the checkpoint stores it
// (4- or 8-bit codes, FP8, NVFP4); or a stack of projections of one input that are not all plain, run one by one.
struct Linear {
  at::Tensor weight;  // [out, in]; undefined: kept otherwise, or the layer has no such projection
  at::Tensor bias;    // [out]; undefined: none (a stack of parts: theirs)
  std::shared_ptr<const IntegerWeight> integer;  // the weight as 4- or 8-bit codes; null: none
  std::shared_ptr<const Fp8Weight> fp8;          // the weight as FP8 values and scales; null: none
  std::shared_ptr<const QuantizedExperts> fp4;   // the weight as NVFP4 codes and scales (a stack of one); null: none
  std::vector<Linear> parts;                     // a stack whose parts are not all plain: their outputs joined in order

  bool defined() const { return weight.defined() || kept() || !parts.empty(); }
  // in the checkpoint's quantized form
  bool kept() const { return integer != nullptr || fp8 != nullptr || fp4 != nullptr; }
  int64_t out_features() const;
  int64_t bytes() const;  // what the weight and bias hold (a stack's: its parts')
};

// x @ l.weight^T + l.bias, as at::linear (a weight kept as codes: integer_weight.h says how). On the CPU in fp32
// through oneDNN's matmul (the op torch's own CPU compiler emits), which on AVX2 machines takes a decode step's few
// rows 1.5x to 2.5x faster than MKL's sgemm that at::linear calls (docs/performance.md, "A step's time on an AMD
// AVX2 CPU"); anywhere else, and where the torch in use was built without oneDNN, at::linear itself. The two differ
// only in the rounding of their sums.
at::Tensor linear(const at::Tensor& x, const Linear& l);

// Whether linear takes oneDNN's path for these operands.
bool linear_by_onednn(const at::Tensor& x, const at::Tensor& weight);

}  // namespace prefix_scorer
