#include "model/ops/integer_weight.h"

#include <fmt/format.h>

#include <stdexcept>

namespace prefix_scorer {
namespace {

// [rows, groups * group] from codes [rows, groups, group] and per-group zero points and scales [rows, groups].
at::Tensor dequantize_grouped(const at::Tensor& codes, const at::Tensor& zeros, const at::Tensor& scales) {
  return ((codes.to(at::kFloat) - zeros.to(at::kFloat).unsqueeze(-1)) * scales.to(at::kFloat).unsqueeze(-1))
      .flatten(1);
}

bool int4_kernel_takes(at::ScalarType dtype, c10::Device device, int64_t rows, int64_t group) {
  return device.is_cpu() && (dtype == at::kBFloat16 || dtype == at::kHalf) && rows % 16 == 0 &&
         (group == 32 || group == 64 || group == 128 || group == 256);
}

// Codes of 8 bits, one scale a channel, zero points all 128: signed codes times a scale, as ATen's int8 matmul takes.
bool int8_kernel_takes(const IntegerGroups& g, at::ScalarType dtype, c10::Device device) {
  return device.is_cpu() && (dtype == at::kBFloat16 || dtype == at::kHalf) && g.bits == 8 && g.scales.size(1) == 1 &&
         at::all(g.zeros == 128).item<bool>();
}

}  // namespace

IntegerGroups quantize_symmetric(const at::Tensor& weight, int64_t group, int64_t bits) {
  const int64_t rows = weight.size(0), cols = weight.size(1), zero = int64_t{1} << (bits - 1);
  if (group < 1 || cols % group != 0)
    throw std::invalid_argument(fmt::format("{} inputs do not split into groups of {}", cols, group));
  const at::Tensor grouped = weight.to(at::kFloat).reshape({rows, cols / group, group});
  const at::Tensor scales = grouped.abs().amax(-1).clamp_min(1e-12) / static_cast<double>(zero - 1);
  const at::Tensor codes =
      (at::round(grouped / scales.unsqueeze(-1)) + zero).clamp(0, 2 * zero - 1).to(at::kInt).reshape({rows, cols});
  return {codes, at::full({rows, cols / group}, zero, at::kInt), scales,
          at::arange(cols, at::kLong).div(group, "floor"), bits};
}

at::Tensor dequantize(const IntegerGroups& g) {
  const at::Tensor scale = g.scales.to(at::kFloat).index_select(1, g.g_idx);
  const at::Tensor zero = g.zeros.to(at::kFloat).index_select(1, g.g_idx);
  return (g.codes.to(at::kFloat) - zero) * scale;
}

int64_t IntegerWeight::bytes() const {
  int64_t total = 0;
  for (const at::Tensor* t : {&input_order, &kernel_codes, &kernel_scales, &codes, &scales, &zeros})
    if (t->defined()) total += static_cast<int64_t>(t->nbytes());
  return total;
}

std::optional<IntegerWeight> integer_weight(const IntegerGroups& g, at::ScalarType dtype, c10::Device device) {
  const int64_t rows = g.codes.size(0), cols = g.codes.size(1), groups = g.scales.size(1);
  if ((g.bits != 4 && g.bits != 8) || groups < 1 || cols % groups != 0) return std::nullopt;
  IntegerWeight w;
  w.rows = rows;
  w.cols = cols;
  w.group = cols / groups;
  w.bits = g.bits;
  // Act-order: inputs sorted by group, so that each group's are consecutive (as they are when every group has
  // `group` of them).
  const at::Tensor order = at::argsort(g.g_idx, /*stable=*/true);
  if (!at::equal(g.g_idx.index_select(0, order), at::arange(cols, at::kLong).div(w.group, "floor"))) return std::nullopt;
  at::Tensor codes = g.codes;
  if (!at::equal(order, at::arange(cols, at::kLong))) {
    w.input_order = order.to(device);
    codes = codes.index_select(1, order);
  }
  if (w.bits == 4 && int4_kernel_takes(dtype, device, rows, w.group)) {
    // w = (code - zero) * scale = (code - 8) * scale + (8 - zero) * scale
    const at::Tensor scale = g.scales.to(at::kFloat), zero = (8 - g.zeros.to(at::kFloat)) * scale;
    w.kernel_codes = at::_convert_weight_to_int4pack_for_cpu(codes.contiguous(), /*innerKTiles=*/1);
    w.kernel_scales = at::stack({scale, zero}, -1).transpose(0, 1).contiguous().to(dtype);
    return w;
  }
  if (int8_kernel_takes(g, dtype, device)) {
    w.kernel_codes = (codes - 128).to(at::kChar).contiguous();
    w.kernel_scales = g.scales.select(1, 0).to(dtype).contiguous();
    return w;
  }
  if (w.bits == 8) {
    w.codes = codes.to(device, at::kByte, /*non_blocking=*/false, /*copy=*/true);
  } else {
    const at::Tensor padded = cols % 2 == 0 ? codes : at::constant_pad_nd(codes, {0, 1});
    const at::Tensor pairs = padded.to(at::kByte).reshape({rows, -1, 2});
    w.codes = at::bitwise_or(pairs.select(2, 0), at::bitwise_left_shift(pairs.select(2, 1), 4)).to(device);
  }
  // copies: the groups' tensors may be views of the checkpoint's mapped file
  w.scales = g.scales.to(device, at::kFloat, /*non_blocking=*/false, /*copy=*/true);
  w.zeros = g.zeros.to(device, at::kFloat, /*non_blocking=*/false, /*copy=*/true);
  return w;
}

at::Tensor kernel_product(const at::Tensor& x, const IntegerWeight& w) {
  std::vector<int64_t> sizes = x.sizes().vec();
  sizes.back() = w.rows;
  const at::Tensor rows = x.reshape({-1, w.cols}).contiguous();
  const at::Tensor product = w.bits == 8 ? at::_weight_int8pack_mm(rows, w.kernel_codes, w.kernel_scales)
                                         : at::_weight_int4pack_mm_for_cpu(rows, w.kernel_codes, w.group, w.kernel_scales);
  return product.reshape(sizes);
}

at::Tensor dequantize(const IntegerWeight& w, at::ScalarType dtype) {
  if (!w.codes.defined()) throw std::logic_error("an IntegerWeight held by ATen's integer matmuls is not dequantized");
  if (w.codes.is_cpu() && (dtype == at::kFloat || dtype == at::kBFloat16 || dtype == at::kHalf))
    return cpu::dequantize_integer(w, dtype);
  const at::Tensor unpacked =
      w.bits == 8 ? w.codes
                  : at::stack({at::bitwise_and(w.codes, 15), at::bitwise_right_shift(w.codes, 4)}, -1)
                        .reshape({w.rows, -1})
                        .narrow(1, 0, w.cols);
  const at::Tensor codes = unpacked.reshape({w.rows, -1, w.group});
  return dequantize_grouped(codes, w.zeros, w.scales).to(dtype);
}

at::Tensor ordered_inputs(const at::Tensor& x, const IntegerWeight& w) {
  return w.input_order.defined() ? x.index_select(-1, w.input_order) : x;
}

}  // namespace prefix_scorer
