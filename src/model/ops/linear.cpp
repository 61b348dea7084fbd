#include "model/ops/linear.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>
#include <string_view>
#include <vector>

namespace prefix_scorer {
namespace {

using PointwiseLinear = at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                                   std::string_view, c10::List<std::optional<at::Scalar>>,
                                   std::optional<std::string_view>);

// mkldnn::_linear_pointwise with no activation after it, where this torch registers it.
const std::optional<c10::TypedOperatorHandle<PointwiseLinear>>& onednn_linear() {
  static const std::optional<c10::TypedOperatorHandle<PointwiseLinear>> op =
      []() -> std::optional<c10::TypedOperatorHandle<PointwiseLinear>> {
    if (!at::hasMKLDNN()) return std::nullopt;
    const auto handle = c10::Dispatcher::singleton().findSchema({"mkldnn::_linear_pointwise", ""});
    if (!handle || !handle->hasKernelForDispatchKey(c10::DispatchKey::CPU)) return std::nullopt;
    return handle->typed<PointwiseLinear>();
  }();
  return op;
}

}  // namespace

bool linear_by_onednn(const at::Tensor& x, const at::Tensor& weight) {
  return x.is_cpu() && x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat && weight.dim() == 2 &&
         x.dim() >= 1 && !x.is_mkldnn() && !weight.is_mkldnn() && onednn_linear().has_value();
}

namespace {

at::Tensor dense_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias_or_none) {
  const std::optional<at::Tensor> bias = bias_or_none.defined() ? std::optional<at::Tensor>(bias_or_none) : std::nullopt;
  if (!linear_by_onednn(x, weight) || (bias && bias->scalar_type() != at::kFloat)) return at::linear(x, weight, bias);
  return onednn_linear()->call(x, weight, bias, "none", c10::List<std::optional<at::Scalar>>(), std::nullopt);
}

}  // namespace

int64_t Linear::out_features() const {
  if (weight.defined()) return weight.size(0);
  if (integer) return integer->rows;
  if (fp8) return fp8->values.size(0);
  if (fp4) return fp4->values.size(1);
  int64_t rows = 0;
  for (const Linear& part : parts) rows += part.out_features();
  return rows;
}

int64_t Linear::bytes() const {
  int64_t total = static_cast<int64_t>((weight.defined() ? weight.nbytes() : 0) + (bias.defined() ? bias.nbytes() : 0));
  if (integer) total += integer->bytes();
  if (fp8) total += fp8->bytes();
  if (fp4) total += fp4->bytes();
  for (const Linear& part : parts) total += part.bytes();
  return total;
}

at::Tensor linear(const at::Tensor& x, const Linear& l) {
  if (!l.parts.empty()) {
    std::vector<at::Tensor> outputs;
    for (const Linear& part : l.parts) outputs.push_back(linear(x, part));
    return at::cat(outputs, -1);
  }
  if (l.fp8) return dense_linear(x, dequantize(*l.fp8, x.scalar_type()), l.bias);
  if (l.fp4)
    return dense_linear(x, dequantize_one(*l.fp4, x.scalar_type()), l.bias);
  if (!l.integer) return dense_linear(x, l.weight, l.bias);
  const at::Tensor ordered = ordered_inputs(x, *l.integer);
  if (!l.integer->kernel_codes.defined()) return dense_linear(ordered, dequantize(*l.integer, x.scalar_type()), l.bias);
  const at::Tensor product = kernel_product(ordered, *l.integer);
  return l.bias.defined() ? product + l.bias : product;
}

}  // namespace prefix_scorer
