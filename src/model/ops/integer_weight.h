#pragma once
// A projection's weight kept as 4- or 8-bit integer codes in groups along the input (W4A16 and W8A16:
// compressed-tensors' pack-quantized, GPTQ, AWQ), at an eighth or a quarter of its fp32 bytes. Its products are
// those of the weight dequantized in fp32, (code - zero point) * scale, up to the rounding of their sums.

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

// weight [out, in] quantized symmetrically to `bits`-wide codes in groups of `group` inputs (scale: the group's
// largest magnitude over 2^(bits - 1) - 1, zero point 2^(bits - 1)), as W4A16 and W8A16 checkpoints are made.
IntegerGroups quantize_symmetric(const at::Tensor& weight, int64_t group, int64_t bits);

// float32 [out, in]: (code - zero point) * scale of each input's group.
at::Tensor dequantize(const IntegerGroups& g);

struct IntegerWeight {
  int64_t rows = 0, cols = 0, group = 0, bits = 4;
  at::Tensor input_order;  // act-order: the inputs sorted by group (a gather of x's columns); undefined: in order
  // On the CPU with bf16 or fp16 activations, ATen's integer matmuls. 4-bit codes: its int4 packing of the codes
  // (made on the machine that runs it: the layout follows the CPU's vector width) and [groups, rows, 2] scales and
  // zeros in the activations' dtype, as w = (code - 8) * scale + zero. 8-bit codes symmetric per channel: int8
  // [rows, cols] codes less 128 and [rows] scales in the activations' dtype, as w = code * scale.
  at::Tensor kernel_codes, kernel_scales;
  // Otherwise uint8 codes, 4-bit ones two a byte (the even input's in the low bits), 8-bit ones one a byte, with fp32
  // scales and zero points [rows, groups], dequantized into a workspace just before each product.
  at::Tensor codes, scales, zeros;

  int64_t bytes() const;
};

// `g` kept as codes for activations of `dtype` on `device`; nullopt where they cannot be (codes of other widths
// than 4 and 8, groups of unequal sizes).
std::optional<IntegerWeight> integer_weight(const IntegerGroups& g, at::ScalarType dtype, c10::Device device);

// x [..., cols] times the weight's transpose, [..., rows] in x's dtype, where ATen's integer matmuls hold it
// (kernel_codes); the dense weight otherwise (dequantized in fp32, then cast to `dtype`), x's columns then gathered
// into input_order by the caller (ordered_inputs).
at::Tensor kernel_product(const at::Tensor& x, const IntegerWeight& w);
at::Tensor dequantize(const IntegerWeight& w, at::ScalarType dtype);
at::Tensor ordered_inputs(const at::Tensor& x, const IntegerWeight& w);

namespace cpu {
// dequantize's one pass on the CPU (src/model/cpu/dequantize_integer.cpp): fp32, bf16 or fp16, bitwise the ATen ops'.
at::Tensor dequantize_integer(const IntegerWeight& w, at::ScalarType dtype);
}  // namespace cpu

}  // namespace prefix_scorer
