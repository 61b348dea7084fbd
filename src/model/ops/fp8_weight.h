#pragma once
// A projection's weight kept as the checkpoint stores it in FP8: float8_e4m3fn values with an fp32 scale a block
// (block-FP8's blocks; compressed-tensors' scales per channel, group or tensor as blocks of a row, of a group's
// inputs in a row, of the whole matrix), at a quarter of its fp32 bytes. Dequantized into a workspace just before
// each product, to the values the checkpoint's weight dequantized at load has.

#include <ATen/ATen.h>

#include <array>
#include <cstdint>

namespace prefix_scorer {

struct Fp8Weight {
  at::Tensor values;  // float8_e4m3fn [rows, cols]
  at::Tensor scales;  // fp32 [ceil(rows / block rows), ceil(cols / block cols)]
  std::array<int64_t, 2> block{0, 0};

  int64_t bytes() const;
};

// values [..., rows, cols] times their block's scale, in fp32 (unchecked: block_fp8.h checks the grid).
at::Tensor dequantize_blocks(const at::Tensor& values, const at::Tensor& scales, std::array<int64_t, 2> block);

// weight [rows, cols] as float8_e4m3fn in blocks of `block`, each block's largest magnitude at 448 (its scale over
// 448), as block-FP8 checkpoints are made.
Fp8Weight quantize_fp8_blocks(const at::Tensor& weight, std::array<int64_t, 2> block);

// dequantize_blocks cast to `dtype`: on the CPU in one pass (cpu::dequantize_fp8), bitwise the ATen ops' values.
at::Tensor dequantize_blocks(const at::Tensor& values, const at::Tensor& scales, std::array<int64_t, 2> block,
                             at::ScalarType dtype);

// The weight in `dtype`.
at::Tensor dequantize(const Fp8Weight& w, at::ScalarType dtype);

namespace cpu {
// values float8_e4m3fn [..., rows, cols] on the CPU, scales [..., row blocks, col blocks]: fp32, bf16 or fp16
// (src/model/cpu/dequantize_fp8.cpp).
at::Tensor dequantize_fp8(const at::Tensor& values, const at::Tensor& scales, std::array<int64_t, 2> block,
                          at::ScalarType dtype);
}  // namespace cpu

}  // namespace prefix_scorer
