#include "model/ops/int4_weight.h"

#include <fmt/format.h>

#include <stdexcept>

namespace prefix_scorer {
namespace {

// [rows, groups * group] from codes [rows, groups, group] and per-group zero points and scales [rows, groups].
at::Tensor dequantize_grouped(const at::Tensor& codes, const at::Tensor& zeros, const at::Tensor& scales) {
  return ((codes.to(at::kFloat) - zeros.to(at::kFloat).unsqueeze(-1)) * scales.to(at::kFloat).unsqueeze(-1))
      .flatten(1);
}

bool kernel_takes(at::ScalarType dtype, c10::Device device, int64_t rows, int64_t group) {
  return device.is_cpu() && (dtype == at::kBFloat16 || dtype == at::kHalf) && rows % 16 == 0 &&
         (group == 32 || group == 64 || group == 128 || group == 256);
}

}  // namespace

IntegerGroups quantize_int4(const at::Tensor& weight, int64_t group) {
  const int64_t rows = weight.size(0), cols = weight.size(1);
  if (group < 1 || cols % group != 0)
    throw std::invalid_argument(fmt::format("{} inputs do not split into groups of {}", cols, group));
  const at::Tensor grouped = weight.to(at::kFloat).reshape({rows, cols / group, group});
  const at::Tensor scales = grouped.abs().amax(-1).clamp_min(1e-12) / 7;
  const at::Tensor codes = (at::round(grouped / scales.unsqueeze(-1)) + 8).clamp(0, 15).to(at::kInt).reshape({rows, cols});
  return {codes, at::full({rows, cols / group}, 8, at::kInt), scales,
          at::arange(cols, at::kLong).div(group, "floor"), 4};
}

at::Tensor dequantize(const IntegerGroups& g) {
  const at::Tensor scale = g.scales.to(at::kFloat).index_select(1, g.g_idx);
  const at::Tensor zero = g.zeros.to(at::kFloat).index_select(1, g.g_idx);
  return (g.codes.to(at::kFloat) - zero) * scale;
}

int64_t Int4Weight::bytes() const {
  int64_t total = 0;
  for (const at::Tensor* t : {&input_order, &kernel_codes, &scales_and_zeros, &nibbles, &scales, &zeros})
    if (t->defined()) total += static_cast<int64_t>(t->nbytes());
  return total;
}

std::optional<Int4Weight> int4_weight(const IntegerGroups& g, at::ScalarType dtype, c10::Device device) {
  const int64_t rows = g.codes.size(0), cols = g.codes.size(1), groups = g.scales.size(1);
  if (g.bits != 4 || groups < 1 || cols % groups != 0) return std::nullopt;
  Int4Weight w;
  w.rows = rows;
  w.cols = cols;
  w.group = cols / groups;
  // Act-order: inputs sorted by group, so that each group's are consecutive (as they are when every group has
  // `group` of them).
  const at::Tensor order = at::argsort(g.g_idx, /*stable=*/true);
  if (!at::equal(g.g_idx.index_select(0, order), at::arange(cols, at::kLong).div(w.group, "floor"))) return std::nullopt;
  at::Tensor codes = g.codes;
  if (!at::equal(order, at::arange(cols, at::kLong))) {
    w.input_order = order.to(device);
    codes = codes.index_select(1, order);
  }
  if (kernel_takes(dtype, device, rows, w.group)) {
    // w = (code - zero) * scale = (code - 8) * scale + (8 - zero) * scale
    const at::Tensor scale = g.scales.to(at::kFloat), zero = (8 - g.zeros.to(at::kFloat)) * scale;
    w.kernel_codes = at::_convert_weight_to_int4pack_for_cpu(codes.contiguous(), /*innerKTiles=*/1);
    w.scales_and_zeros = at::stack({scale, zero}, -1).transpose(0, 1).contiguous().to(dtype);
    return w;
  }
  const at::Tensor padded = cols % 2 == 0 ? codes : at::constant_pad_nd(codes, {0, 1});
  const at::Tensor pairs = padded.to(at::kByte).reshape({rows, -1, 2});
  w.nibbles = at::bitwise_or(pairs.select(2, 0), at::bitwise_left_shift(pairs.select(2, 1), 4)).to(device);
  // copies: the groups' tensors may be views of the checkpoint's mapped file
  w.scales = g.scales.to(device, at::kFloat, /*non_blocking=*/false, /*copy=*/true);
  w.zeros = g.zeros.to(device, at::kFloat, /*non_blocking=*/false, /*copy=*/true);
  return w;
}

at::Tensor int4_kernel_product(const at::Tensor& x, const Int4Weight& w) {
  std::vector<int64_t> sizes = x.sizes().vec();
  sizes.back() = w.rows;
  const at::Tensor rows = x.reshape({-1, w.cols}).contiguous();
  return at::_weight_int4pack_mm_for_cpu(rows, w.kernel_codes, w.group, w.scales_and_zeros).reshape(sizes);
}

at::Tensor dequantize(const Int4Weight& w, at::ScalarType dtype) {
  if (!w.nibbles.defined()) throw std::logic_error("an Int4Weight held by ATen's kernel is not dequantized");
  if (w.nibbles.is_cpu() && (dtype == at::kFloat || dtype == at::kBFloat16 || dtype == at::kHalf))
    return cpu::dequantize_int4(w, dtype);
  const at::Tensor codes = at::stack({at::bitwise_and(w.nibbles, 15), at::bitwise_right_shift(w.nibbles, 4)}, -1)
                               .reshape({w.rows, -1})
                               .narrow(1, 0, w.cols)
                               .reshape({w.rows, -1, w.group});
  return dequantize_grouped(codes, w.zeros, w.scales).to(dtype);
}

at::Tensor ordered_inputs(const at::Tensor& x, const Int4Weight& w) {
  return w.input_order.defined() ? x.index_select(-1, w.input_order) : x;
}

}  // namespace prefix_scorer
