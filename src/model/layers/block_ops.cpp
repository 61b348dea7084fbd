#include "model/layers/block_ops.h"

#include "model/ops/cast.h"

#include <optional>
#include <stdexcept>

namespace prefix_scorer {

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, const NormSpec& n) {
  if (!weight.defined()) return x;
  // In fp32 all three are x * rsqrt(mean(x^2) + eps) * w', the same products as torch's rms_norm: one op, not seven.
  // (q and k normed together scale by per-head weights [heads, head_dim]: those multiply after it.)
  if (x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat) {
    const at::Tensor w = n.plus_one ? weight + 1 : weight;
    if (w.dim() > 1) return at::rms_norm(x, {x.size(-1)}, std::nullopt, n.eps) * w;
    return at::rms_norm(x, {x.size(-1)}, w, n.eps);
  }
  // Other dtypes as transformers: x * rsqrt(mean(x^2) + eps) in fp32 (torch's rms_norm: one op where the five it
  // stands for are a launch each), then the weight as each family applies it: most after rounding to x's dtype,
  // which rms_norm of x itself does (computing in fp32, rounding once).
  if (!n.plus_one && !n.weight_in_fp32) return weight * at::rms_norm(x, {x.size(-1)}, std::nullopt, n.eps);
  const at::Tensor normalized = at::rms_norm(cast(x, at::kFloat), {x.size(-1)}, std::nullopt, n.eps);
  if (n.plus_one) return cast(normalized * (cast(weight, at::kFloat) + 1), x.scalar_type());
  return cast(cast(weight, at::kFloat) * normalized, x.scalar_type());
}

at::Tensor unit_rms_norm(const at::Tensor& x, double eps) {
  return cast(at::rms_norm(cast(x, at::kFloat), {x.size(-1)}, std::nullopt, eps), x.scalar_type());
}

at::Tensor layer_norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const NormSpec& n) {
  if (!n.weight_in_fp32 && weight.dim() == 1) return at::layer_norm(x, {x.size(-1)}, weight, bias, n.eps);
  at::Tensor y = at::layer_norm(cast(x, at::kFloat), {x.size(-1)}, std::nullopt, std::nullopt, n.eps) *
                 cast(weight, at::kFloat);
  if (bias.defined()) y = y + cast(bias, at::kFloat);
  return cast(y, x.scalar_type());
}

at::Tensor norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const NormSpec& n) {
  if (n.layer_norm) return layer_norm(x, weight, bias, n);
  return rms_norm(x, weight, n);
}

at::Tensor norm(const at::Tensor& x, const at::Tensor& weight, const NormSpec& n) { return norm(x, weight, {}, n); }

at::Tensor xielu(const at::Tensor& x, const LayerWeights& l) {
  const at::Tensor alpha_p = at::softplus(l.xielu_alpha_p);
  const at::Tensor alpha_n = l.xielu_beta + at::softplus(l.xielu_alpha_n);
  const at::Tensor linear = l.xielu_beta * x;
  return at::where(x > 0, alpha_p * x * x + linear, (at::expm1(at::minimum(x, l.xielu_eps)) - x) * alpha_n + linear);
}

at::Tensor activate(const at::Tensor& x, Activation activation) {
  switch (activation) {
    case Activation::kXielu:
      throw std::logic_error("xielu reads its layer's parameters: call xielu()");
    case Activation::kGeluTanh:
      return at::gelu(x, "tanh");
    case Activation::kGelu:
      return at::gelu(x);
    case Activation::kRelu2:
      return at::relu(x).square();
    case Activation::kSilu:
      break;
  }
  return at::silu(x);
}

at::Tensor scale_residual(const at::Tensor& x, double multiplier) { return multiplier == 1 ? x : x * multiplier; }

at::Tensor soft_cap(const at::Tensor& x, double cap) { return cap > 0 ? at::tanh(x / cap) * cap : x; }

at::Tensor scale_in_dtype(double value, const at::Tensor& like) {
  return at::scalar_tensor(static_cast<float>(value), like.options().dtype(at::kFloat)).to(like.scalar_type());
}

}  // namespace prefix_scorer
