#include "model/ops/quantized_experts.h"

#include "model/ops/mxfp4.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <vector>

namespace prefix_scorer {
namespace {

at::Tensor empty_stack(const at::Tensor& one, int64_t experts, c10::Device device) {
  if (!one.defined()) return one;
  std::vector<int64_t> sizes = one.sizes().vec();
  sizes[0] = experts;
  return at::empty(sizes, one.options().device(device));
}

void set_part(at::Tensor& stack, int64_t e, const at::Tensor& one, const char* part) {
  if (stack.defined() != one.defined() || (one.defined() && stack.sizes().slice(1) != one.sizes().slice(1)))
    throw std::invalid_argument(fmt::format("an expert's {} [{}] does not fit its layer's stack [{}]", part,
                                            one.defined() ? fmt::format("{}", fmt::join(one.sizes(), ", ")) : "none",
                                            stack.defined() ? fmt::format("{}", fmt::join(stack.sizes(), ", ")) : "none"));
  if (one.defined()) stack.select(0, e).copy_(one.select(0, 0));
}

at::Tensor copied(const at::Tensor& t, c10::Device device) {
  if (!t.defined()) return t;
  return t.to(device, t.scalar_type(), /*non_blocking=*/false, /*copy=*/true).contiguous();
}

at::Tensor every(const at::Tensor& t, int64_t start, int64_t step, c10::Device device) {
  if (!t.defined()) return t;
  return copied(t.dim() > 1 ? t.slice(1, start, t.size(1), step) : t, device);  // NVFP4's global scales: per expert
}

}  // namespace

int64_t QuantizedExperts::bytes() const {
  int64_t total = 0;
  for (const at::Tensor* t : {&values, &scales, &zeros, &input_order})
    if (t->defined()) total += static_cast<int64_t>(t->nbytes());
  return total;
}

QuantizedExperts one_expert(const Fp8Weight& w) {
  return {QuantizedExperts::Form::kFp8, w.values.unsqueeze(0), w.scales.to(at::kFloat).unsqueeze(0), {}, w.block,
          w.values.size(1)};
}

QuantizedExperts one_expert(const IntegerWeight& w) {
  if (!w.codes.defined()) throw std::invalid_argument("an expert's codes are kept as bytes, not for ATen's kernels");
  QuantizedExperts one{QuantizedExperts::Form::kInteger, w.codes.unsqueeze(0), w.scales.unsqueeze(0),
                       w.zeros.unsqueeze(0), {1, w.group}, w.cols, w.bits};
  if (w.input_order.defined()) one.input_order = w.input_order.unsqueeze(0);
  return one;
}

QuantizedExperts empty_experts(const QuantizedExperts& like, int64_t experts, c10::Device device) {
  QuantizedExperts stack = like;
  stack.values = empty_stack(like.values, experts, device);
  stack.scales = empty_stack(like.scales, experts, device);
  stack.zeros = empty_stack(like.zeros, experts, device);
  stack.input_order = empty_stack(like.input_order, experts, device);
  return stack;
}

void set_expert(QuantizedExperts& stack, int64_t e, const QuantizedExperts& one) {
  if (stack.form != one.form || stack.block != one.block || stack.in != one.in || stack.bits != one.bits)
    throw std::invalid_argument("an expert is stored in another form than the other experts of its layer");
  set_part(stack.values, e, one.values, "values");
  set_part(stack.scales, e, one.scales, "scales");
  set_part(stack.zeros, e, one.zeros, "zero points");
  if (stack.input_order.defined() || one.input_order.defined()) {  // act-order: experts in order keep theirs too
    const at::Tensor in_order = at::arange(stack.in, stack.values.options().dtype(at::kLong));
    if (!stack.input_order.defined())
      stack.input_order = in_order.unsqueeze(0).expand({stack.experts(), stack.in}).contiguous();
    stack.input_order.select(0, e).copy_(one.input_order.defined() ? one.input_order.select(0, 0) : in_order);
  }
}

QuantizedExperts rows_of(const QuantizedExperts& w, int64_t start, int64_t step, c10::Device device) {
  if (w.form == QuantizedExperts::Form::kFp8 || w.form == QuantizedExperts::Form::kNone)
    throw std::invalid_argument("only experts with scales per row split by rows");
  QuantizedExperts rows = w;
  rows.values = every(w.values, start, step, device);
  rows.scales = every(w.scales, start, step, device);
  rows.zeros = every(w.zeros, start, step, device);
  rows.input_order = copied(w.input_order, device);  // per expert, not per row
  return rows;
}

QuantizedExperts copied_to(const QuantizedExperts& w, c10::Device device) {
  QuantizedExperts copy = w;
  for (at::Tensor* t : {&copy.values, &copy.scales, &copy.zeros, &copy.input_order}) *t = copied(*t, device);
  return copy;
}

at::Tensor dequantize_one(const QuantizedExperts& w, at::ScalarType dtype) {
  return dequantize_experts(w, at::zeros({1}, w.values.options().dtype(at::kLong)), dtype).squeeze(0);
}

at::Tensor dequantize_experts(const QuantizedExperts& w, const at::Tensor& chosen, at::ScalarType dtype) {
  switch (w.form) {
    case QuantizedExperts::Form::kFp8:
      return dequantize_blocks(w.values.index_select(0, chosen), w.scales.index_select(0, chosen), w.block, dtype);
    case QuantizedExperts::Form::kMxfp4:
      return dequantize_mxfp4_rows(w.values.index_select(0, chosen), w.scales.index_select(0, chosen)).to(dtype);
    case QuantizedExperts::Form::kNvfp4: {
      const at::Tensor scales = w.scales.index_select(0, chosen).to(at::kFloat) /
                                w.zeros.index_select(0, chosen).view({-1, 1, 1});
      return (fp4_values(w.values.index_select(0, chosen)) * scales.repeat_interleave(16, -1)).to(dtype);
    }
    case QuantizedExperts::Form::kInteger: {
      // expert by expert through the projection's own dequantization (one pass on the CPU), act-order's columns
      // then put back in the inputs' order
      const at::Tensor on_host = chosen.to(at::kCPU);
      if (on_host.size(0) == 0) return at::empty({0, w.values.size(1), w.in}, w.scales.options().dtype(dtype));
      std::vector<at::Tensor> experts;
      for (int64_t k = 0; k < on_host.size(0); ++k) {
        const int64_t e = on_host[k].item<int64_t>();
        IntegerWeight one;
        one.rows = w.values.size(1);
        one.cols = w.in;
        one.group = w.in / w.scales.size(2);
        one.bits = w.bits;
        one.codes = w.values.select(0, e);
        one.scales = w.scales.select(0, e);
        one.zeros = w.zeros.select(0, e);
        const at::Tensor sorted = dequantize(one, dtype);
        experts.push_back(w.input_order.defined()
                              ? at::empty_like(sorted).index_copy_(1, w.input_order.select(0, e), sorted)
                              : sorted);
      }
      return at::stack(experts);
    }
    case QuantizedExperts::Form::kNone:
      break;
  }
  throw std::logic_error("dequantize_experts: no quantized experts");
}

}  // namespace prefix_scorer
