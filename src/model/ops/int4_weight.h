#pragma once
// A projection's weight kept as 4-bit integer codes in groups along the input (W4A16: compressed-tensors'
// pack-quantized, GPTQ, AWQ), at an eighth of its fp32 bytes. Its products are those of the weight dequantized in
// fp32, (code - zero point) * scale, up to the rounding of their sums.

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>

namespace prefix_scorer {

// Integer codes in groups along the input, unpacked: what every integer format is read into.
struct IntegerGroups {
  at::Tensor codes;   // int32 [out, in]: unsigned codes
  at::Tensor zeros;   // int32 [out, groups]: unsigned zero points
  at::Tensor scales;  // [out, groups], as stored
  at::Tensor g_idx;   // int64 [in]: each input's group
  int64_t bits = 0;
};

// weight [out, in] quantized symmetrically to 4-bit codes in groups of `group` inputs (scale: the group's largest
// magnitude over 7, zero point 8), as W4A16 checkpoints are made.
IntegerGroups quantize_int4(const at::Tensor& weight, int64_t group);

// float32 [out, in]: (code - zero point) * scale of each input's group.
at::Tensor dequantize(const IntegerGroups& g);

struct Int4Weight {
  int64_t rows = 0, cols = 0, group = 0;
  at::Tensor input_order;  // act-order: the inputs sorted by group (a gather of x's columns); undefined: in order
  // On the CPU with bf16 or fp16 activations, ATen's int4 matmul: its packing of the codes (made on the machine that
  // runs it: the layout follows the CPU's vector width) and [groups, rows, 2] scales and zeros in the activations'
  // dtype, as w = (code - 8) * scale + zero.
  at::Tensor kernel_codes, scales_and_zeros;
  // Otherwise two codes a byte (the even input's in the low bits) with fp32 scales and zero points [rows, groups],
  // dequantized into a workspace just before each product.
  at::Tensor nibbles, scales, zeros;

  int64_t bytes() const;
};

// `g` kept as 4-bit codes for activations of `dtype` on `device`; nullopt where they cannot be (codes of other
// widths, groups of unequal sizes).
std::optional<Int4Weight> int4_weight(const IntegerGroups& g, at::ScalarType dtype, c10::Device device);

// x [..., cols] times the weight's transpose, [..., rows] in x's dtype, where ATen's int4 matmul holds it
// (kernel_codes); the dense weight otherwise (dequantized in fp32, then cast to `dtype`), x's columns then gathered
// into input_order by the caller (ordered_inputs).
at::Tensor int4_kernel_product(const at::Tensor& x, const Int4Weight& w);
at::Tensor dequantize(const Int4Weight& w, at::ScalarType dtype);
at::Tensor ordered_inputs(const at::Tensor& x, const Int4Weight& w);

namespace cpu {
// dequantize's one pass on the CPU (src/model/cpu/dequantize_int4.cpp): fp32, bf16 or fp16, bitwise the ATen ops'.
at::Tensor dequantize_int4(const Int4Weight& w, at::ScalarType dtype);
}  // namespace cpu

}  // namespace prefix_scorer
