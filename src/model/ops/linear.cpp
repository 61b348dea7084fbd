#include "model/ops/linear.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>
#include <string_view>

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

at::Tensor linear(const at::Tensor& x, const Linear& l) {
  const std::optional<at::Tensor> bias = l.bias.defined() ? std::optional<at::Tensor>(l.bias) : std::nullopt;
  if (!linear_by_onednn(x, l.weight) || (bias && bias->scalar_type() != at::kFloat)) return at::linear(x, l.weight, bias);
  return onednn_linear()->call(x, l.weight, bias, "none", c10::List<std::optional<at::Scalar>>(), std::nullopt);
}

}  // namespace prefix_scorer
