#include "model/checkpoint/integer_codes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <utility>

namespace prefix_scorer {
namespace {

void check(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

std::string shape_of(const at::Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

void check_words(const at::Tensor& t, const char* name) {
  check(t.scalar_type() == at::kInt && t.dim() == 2,
        fmt::format("{} is {} {}, expected int32 words of two dimensions", name, c10::toString(t.scalar_type()),
                    shape_of(t)));
}

// Each input's group: g_idx as given, or inputs in consecutive groups of in / groups.
at::Tensor groups_of_inputs(const at::Tensor& g_idx, int64_t in, int64_t groups) {
  if (g_idx.defined()) {
    check(g_idx.dim() == 1 && g_idx.size(0) == in,
          fmt::format("g_idx has shape {}, expected [{}]", shape_of(g_idx), in));
    const at::Tensor idx = g_idx.to(at::kLong);
    check(in == 0 || (idx.min().item<int64_t>() >= 0 && idx.max().item<int64_t>() < groups),
          fmt::format("g_idx names groups outside the {} its scales have", groups));
    return idx;
  }
  check(groups > 0 && in % groups == 0, fmt::format("{} inputs do not split into {} groups of one size", in, groups));
  return at::arange(in, at::kLong).div(in / groups, "floor");
}

// codes [out, in], zeros and scales [out, groups] and each input's group, checked.
IntegerGroups groups_of(at::Tensor codes, at::Tensor zeros, const at::Tensor& scales, const at::Tensor& g_idx,
                        int64_t bits) {
  at::Tensor groups = groups_of_inputs(g_idx, codes.size(1), scales.size(1));
  return {std::move(codes), std::move(zeros), scales, std::move(groups), bits};
}

}  // namespace

at::Tensor unpack_codes(const at::Tensor& words, int64_t bits) {
  check(bits == 2 || bits == 4 || bits == 8, fmt::format("codes of {} bits are not packed whole in 32-bit words", bits));
  const int64_t per_word = 32 / bits;
  const at::Tensor shifts = at::arange(0, 32, bits, words.options().dtype(at::kInt));
  at::Tensor codes = at::bitwise_and(at::bitwise_right_shift(words.unsqueeze(-1), shifts), (1 << bits) - 1);
  std::vector<int64_t> sizes = words.sizes().vec();
  sizes.back() *= per_word;
  return codes.reshape(sizes);
}

IntegerGroups read_pack_quantized(const at::Tensor& packed, const at::Tensor& scale, const at::Tensor& zero_point,
                                     const at::Tensor& g_idx, const std::vector<int64_t>& shape, int64_t bits) {
  check_words(packed, "weight_packed");
  check(shape.size() == 2, fmt::format("weight_shape [{}] is not [out, in]", fmt::join(shape, ", ")));
  const int64_t out = shape[0], in = shape[1], per_word = 32 / bits, offset = int64_t{1} << (bits - 1);
  check(packed.size(0) == out && packed.size(1) == (in + per_word - 1) / per_word,
        fmt::format("weight_packed {} does not hold [{}, {}] in {}-bit codes", shape_of(packed), out, in, bits));
  // one scale (strategy tensor) for every output, or a column of them (channel)
  const at::Tensor scales = scale.numel() == 1 ? scale.reshape({1, 1}).expand({out, 1}) : scale.dim() == 1 ? scale.unsqueeze(1) : scale;
  check(scales.dim() == 2 && scales.size(0) == out,
        fmt::format("weight_scale {} has no row per output of {}", shape_of(scale), out));
  // Signed codes and zero points are stored plus `offset`: the unsigned ones (symmetric: a zero point of 0 signed).
  at::Tensor codes = unpack_codes(packed, bits).narrow(1, 0, in);
  at::Tensor zeros = at::full(scales.sizes(), offset, at::kInt);
  if (zero_point.defined()) {
    check_words(zero_point, "weight_zero_point");
    check(zero_point.size(1) == scales.size(1) && zero_point.size(0) == (out + per_word - 1) / per_word,
          fmt::format("weight_zero_point {} does not pack [{}, {}]", shape_of(zero_point), out, scales.size(1)));
    zeros = unpack_codes(zero_point.t().contiguous(), bits).narrow(1, 0, out).t();
  }
  return groups_of(std::move(codes), std::move(zeros), scales, g_idx, bits);
}

IntegerGroups read_gptq(const at::Tensor& qweight, const at::Tensor& qzeros, const at::Tensor& scales,
                           const at::Tensor& g_idx, int64_t bits, bool zeros_minus_one) {
  check_words(qweight, "qweight");
  check_words(qzeros, "qzeros");
  const int64_t per_word = 32 / bits, in = qweight.size(0) * per_word, out = qweight.size(1);
  check(scales.dim() == 2 && scales.size(1) == out,
        fmt::format("scales {} do not match qweight {}'s {} outputs", shape_of(scales), shape_of(qweight), out));
  check(qzeros.size(0) == scales.size(0) && qzeros.size(1) * per_word == out,
        fmt::format("qzeros {} do not pack scales {} in {}-bit codes", shape_of(qzeros), shape_of(scales), bits));
  const at::Tensor codes = unpack_codes(qweight.t().contiguous(), bits);  // [out, in]
  at::Tensor zeros = unpack_codes(qzeros, bits).t();                      // [out, groups]
  if (zeros_minus_one) zeros = zeros + 1;
  return groups_of(codes, zeros, scales.t(), g_idx, bits);
}

IntegerGroups read_awq(const at::Tensor& qweight, const at::Tensor& qzeros, const at::Tensor& scales) {
  check_words(qweight, "qweight");
  check_words(qzeros, "qzeros");
  const int64_t in = qweight.size(0), out = qweight.size(1) * 8;
  check(scales.dim() == 2 && scales.size(1) == out && qzeros.size(0) == scales.size(0) && qzeros.size(1) * 8 == out,
        fmt::format("AWQ qweight {}, qzeros {} and scales {} do not pair", shape_of(qweight), shape_of(qzeros),
                    shape_of(scales)));
  // code k of a word holds output order[k]: output j is code position[j mod 8] of word j / 8
  const at::Tensor position = at::tensor({0, 4, 1, 5, 2, 6, 3, 7}, at::kLong);
  auto in_output_order = [&](const at::Tensor& words) {
    const at::Tensor codes = unpack_codes(words, 4);
    return codes.reshape({codes.size(0), -1, 8}).index_select(2, position).reshape({codes.size(0), -1});
  };
  const at::Tensor codes = in_output_order(qweight).t();  // [out, in]
  const at::Tensor zeros = in_output_order(qzeros).t();   // [out, groups]
  return groups_of(codes, zeros, scales.t(), at::Tensor(), 4);
}

}  // namespace prefix_scorer
