#pragma once
// Weights stored as integer codes packed into int32 words, in groups sharing a scale and a zero point along the
// input: compressed-tensors' pack-quantized (W4A16, W8A16), GPTQ's and AWQ's, each read into the one unpacked
// form (IntegerGroups: unsigned codes and zero points, scales, each input's group) whose weight is, as every format
// defines it, (code - zero point) * scale.

#include "model/ops/integer_weight.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace prefix_scorer {

// The `bits`-wide unsigned codes of int32 `words` [..., n] (the first code in a word's lowest bits), along the last
// dimension: int32 [..., n * 32 / bits].
at::Tensor unpack_codes(const at::Tensor& words, int64_t bits);

// compressed-tensors pack-quantized: weight_packed [out, ceil(in * bits / 32)] (codes along the input, stored plus
// 2^(bits - 1)), weight_scale [out, groups] (one group for a channel's scale), weight_zero_point [ceil(out * bits /
// 32), groups] packed along the output the same way (undefined: symmetric), weight_g_idx [in] each input's group
// (undefined: input / (in / groups)); `shape` the weight's [out, in].
IntegerGroups read_pack_quantized(const at::Tensor& packed, const at::Tensor& scale, const at::Tensor& zero_point,
                                     const at::Tensor& g_idx, const std::vector<int64_t>& shape, int64_t bits);

// GPTQ: qweight [in * bits / 32, out] (codes along the input), qzeros [groups, out * bits / 32] (along the output;
// v1 stores each minus one), scales [groups, out], g_idx [in] (undefined: input / group size, from the groups).
IntegerGroups read_gptq(const at::Tensor& qweight, const at::Tensor& qzeros, const at::Tensor& scales,
                           const at::Tensor& g_idx, int64_t bits, bool zeros_minus_one);

// AWQ gemm: qweight [in, out / 8] and qzeros [groups, out / 8] with each word's eight codes in AWQ's order
// (outputs 0, 2, 4, 6, 1, 3, 5, 7 from the lowest bits), scales [groups, out].
IntegerGroups read_awq(const at::Tensor& qweight, const at::Tensor& qzeros, const at::Tensor& scales);

}  // namespace prefix_scorer
