#pragma once
// MXFP4, as gpt_oss checkpoints store their experts: 4-bit floats in blocks of 32 sharing one power-of-two scale.
// Dequantized exactly (every value is a 4-bit float times a power of two): at load into transformers' layout, or a
// few experts at a time by a forward (quantized_experts.h) in the blocks' own.

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace prefix_scorer {

// 4-bit floats (E2M1) two a byte, the low nibble first: float32 [..., 2 x bytes].
at::Tensor fp4_values(const at::Tensor& bytes);

// The dequantized shape of blocks [..., rows, groups, 16] with scales [..., rows, groups]: [..., groups * 32, rows].
// Throws std::invalid_argument when the shapes do not pair.
std::vector<int64_t> mxfp4_dequantized_shape(const std::vector<int64_t>& blocks, const std::vector<int64_t>& scales);

// blocks uint8 (two 4-bit floats a byte, the low nibble first), scales uint8 (exponents biased by 127): float32
// [..., rows, groups * 32], in the blocks' layout (unchecked: mxfp4_dequantized_shape checks them).
at::Tensor dequantize_mxfp4_rows(const at::Tensor& blocks, const at::Tensor& scales);

// The same values, checked, as [..., groups * 32, rows]: transformers' dequantization transposes them.
at::Tensor dequantize_mxfp4(const at::Tensor& blocks, const at::Tensor& scales);

}  // namespace prefix_scorer
