#pragma once
// Block-FP8 weights, as DeepSeek V3, Qwen 3, MiniMax and GLM ship them (quantization_config quant_method "fp8"
// with weight_block_size): float8_e4m3fn values, each block of [block_rows, block_cols] sharing one fp32 scale
// (weight_scale_inv: the weight is the stored value times it). Dequantized exactly as transformers dequantizes
// them (each value made fp32, times its block's scale in fp32).

#include <ATen/ATen.h>

#include <array>
#include <cstdint>
#include <vector>

namespace prefix_scorer {

// weight [..., rows, cols] (float8_e4m3fn) with scales [..., ceil(rows / block rows), ceil(cols / block cols)]:
// float32 [..., rows, cols]. Throws std::invalid_argument when the scale grid does not cover the weight's blocks.
at::Tensor dequantize_block_fp8(const at::Tensor& weight, const at::Tensor& scale_inv, std::array<int64_t, 2> block);

// The scale grid a weight of `shape` takes in blocks of `block`.
std::vector<int64_t> block_fp8_scale_shape(const std::vector<int64_t>& shape, std::array<int64_t, 2> block);

}  // namespace prefix_scorer
