#pragma once
// A layer's MLP: gated, ungated, or a mixture of experts (its router and experts, and a shared expert).

#include "model/checkpoint/weights.h"
#include "model/config/layer_spec.h"

#include <ATen/ATen.h>

namespace prefix_scorer {

// A mixture of experts: each token goes through the experts its router chooses (route), weighted by their routing
// weights. The (token, choice) pairs are sorted by expert and each projection runs as one grouped matmul over the
// experts' runs of rows, whose bounds stay on the device: no host sync (torch's grouped kernel on sm90/sm100 in
// bf16; its fallback elsewhere, which reads the bounds on the host itself). Experts kept as the checkpoint stores
// them (ExpertStack::kept) are dequantized just before, only those some row routes to. A shared expert, gated or
// not, adds its output to theirs.
// `routed` is what the router reads: the experts' input, or (Gemma 4) the residual before their norm.
at::Tensor mixture(const MlpSpec& m, const LayerWeights& l, const at::Tensor& g, const at::Tensor& routed,
                   const NormSpec& n);
// The MLP of `m` over its normed input `g`.
at::Tensor mlp(const MlpSpec& m, const LayerWeights& l, const at::Tensor& g, const NormSpec& n);

}  // namespace prefix_scorer
