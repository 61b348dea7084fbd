#pragma once
// The token-wise ops every layer shares: its norms, activations and scales, as transformers computes them.

#include "model/checkpoint/weights.h"
#include "model/config/layer_spec.h"

#include <ATen/ATen.h>

namespace prefix_scorer {

// Llama's RMSNorm scales the normalized input, cast back to its dtype, by w; OLMo 2's by w in fp32; Gemma's by
// (1 + w) in fp32. An undefined weight is a norm the family does not have.
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, const NormSpec& n);

// An RMSNorm without weight, in fp32 then back to x's dtype (Gemma 4's value norm).
at::Tensor unit_rms_norm(const at::Tensor& x, double eps);

// LayerNorm over the last dimension, its bias if any; in fp32 with the weight before rounding back where the family
// computes so (cohere), and always where the weights are per head ([heads, 1, dim]: q and k normed together).
at::Tensor layer_norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const NormSpec& n);

// A block's norm, and the q/k norms: LayerNorm (starcoder2's with biases, cohere's without), else RMSNorm.
at::Tensor norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const NormSpec& n);
at::Tensor norm(const at::Tensor& x, const at::Tensor& weight, const NormSpec& n);

// xIELU as transformers' Python path computes it: alpha_p x^2 + beta x for x > 0, else
// (expm1(min(x, eps)) - x) alpha_n + beta x, with alpha_p = softplus(a_p) and alpha_n = beta + softplus(a_n).
at::Tensor xielu(const at::Tensor& x, const LayerWeights& l);

// An MLP's activation (xIELU, which reads its layer's parameters, is xielu()).
at::Tensor activate(const at::Tensor& x, Activation activation);

// A block's output times granite's residual_multiplier (a Python float in transformers).
at::Tensor scale_residual(const at::Tensor& x, double multiplier);

// cap * tanh(x / cap), or x for cap 0.
at::Tensor soft_cap(const at::Tensor& x, double cap);

// A constant as transformers makes its embedding scales: a float32 tensor, then in `like`'s dtype.
at::Tensor scale_in_dtype(double value, const at::Tensor& like);

}  // namespace prefix_scorer
