#include "model/layers/mlp.h"

#include "model/layers/block_ops.h"
#include "model/ops/linear.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace prefix_scorer {
namespace {

// gpt_oss's clamped SwiGLU: (clamp(up, ±limit) + 1) * g * sigmoid(alpha * g), g = min(gate, limit).
at::Tensor clamped_swiglu(const MlpSpec& m, const at::Tensor& gate, const at::Tensor& up) {
  const at::Tensor g = gate.clamp_max(m.swiglu_limit);
  return (up.clamp(-m.swiglu_limit, m.swiglu_limit) + 1) * (g * at::sigmoid(g * m.swiglu_alpha));
}

// Each (token, choice) row's bias of its expert: the [experts, out] biases gathered by the sorted rows' experts.
at::Tensor expert_bias(const at::Tensor& bias, const at::Tensor& sorted_experts) {
  return bias.defined() ? bias.index_select(0, sorted_experts) : bias;
}

at::Tensor plus(const at::Tensor& x, const at::Tensor& bias) { return bias.defined() ? x + bias : x; }

// A gated MLP's inner values: act(gate) * up, or the clamped SwiGLU.
at::Tensor gated(const MlpSpec& m, const at::Tensor& gate, const at::Tensor& up) {
  return m.swiglu_limit > 0 ? clamped_swiglu(m, gate, up) : activate(gate, m.activation) * up;
}

// The [experts, out, in] stacks the grouped matmuls take, and the ends of the rows' runs of experts: the weights as
// they are; where the experts are kept quantized, only the experts some row routes to, dequantized just now, with the
// runs renumbered to them.
struct ExpertOperands {
  at::Tensor gate, up, down, run_ends;
};

ExpertOperands expert_operands(const StackedExperts& e, const at::Tensor& sorted_experts, int64_t experts,
                               at::ScalarType dtype) {
  if (!e.gate.kept.defined() && !e.up.kept.defined() && !e.down.kept.defined())
    return {e.gate.weight, e.up.weight, e.down.weight,
            at::searchsorted(sorted_experts, at::arange(experts, sorted_experts.options()), /*out_int32=*/true,
                             /*right=*/true)};
  const auto runs = at::unique_consecutive(sorted_experts, /*return_inverse=*/false, /*return_counts=*/true);
  const at::Tensor& used = std::get<0>(runs);
  auto operand = [&](const ExpertStack& s) {
    if (!s.defined()) return at::Tensor();
    return s.kept.defined() ? dequantize_experts(s.kept, used, dtype) : s.weight.index_select(0, used);
  };
  return {operand(e.gate), operand(e.up), operand(e.down), at::cumsum(std::get<2>(runs), 0).to(at::kInt)};
}

at::Tensor expert_forward(const MlpSpec& m, const ExpertWeights& e, const at::Tensor& x) {
  if (m.ungated_experts)
    return linear(activate(linear(x, e.up), m.activation), e.down);
  return linear(gated(m, linear(x, e.gate), linear(x, e.up)), e.down);
}

// The experts a router chooses for each token [tokens, per_token] and their weights, as RouterSpec describes.
std::pair<at::Tensor, at::Tensor> route(const RouterSpec& r, const LayerWeights& l, const at::Tensor& router_in,
                                        at::ScalarType dtype) {
  at::Tensor logits = r.fp32_logits ? linear(router_in.to(at::kFloat), l.router) : linear(router_in, l.router);
  if (r.logit_softcap > 0) logits = soft_cap(logits.to(at::kFloat), r.logit_softcap);
  at::Tensor weights, chosen;
  if (r.scores == RouterScores::kSigmoidOfChosen) {  // the top logits through a sigmoid, renormalized or not
    std::tie(weights, chosen) = logits.topk(r.per_token, -1);
    weights = at::sigmoid(weights);
    if (r.normalize) weights = weights / weights.sum(-1, true);
    return {chosen, weights.to(dtype)};
  }
  if (r.scores == RouterScores::kSoftmaxOfChosen || r.scores == RouterScores::kFp32SoftmaxOfChosen) {
    std::tie(weights, chosen) = logits.topk(r.per_token, -1);  // the top logits, then a softmax over them
    return {chosen, r.scores == RouterScores::kSoftmaxOfChosen ? at::softmax(weights, -1)
                                                                 : at::softmax(weights.to(at::kFloat), -1).to(dtype)};
  }
  const at::Tensor scores = r.scores == RouterScores::kSigmoid         ? at::sigmoid(logits.to(at::kFloat))
                            : r.scores == RouterScores::kSoftmaxInDtype ? at::softmax(logits, -1)
                                                                        : at::softmax(logits.to(at::kFloat), -1);
  at::Tensor choice = r.correction_bias ? scores + l.correction_bias : scores;
  if (r.groups > 1) {  // only the experts of the groups whose two best choice scores sum highest
    const int64_t tokens = choice.size(0), per_group = r.experts / r.groups;
    const at::Tensor grouped = choice.view({tokens, r.groups, per_group});
    const at::Tensor best_groups = std::get<1>(std::get<0>(grouped.topk(2, -1)).sum(-1).topk(r.groups_chosen, -1));
    const at::Tensor kept = at::zeros({tokens, r.groups}, choice.options().dtype(at::kBool)).scatter_(1, best_groups, true);
    // the other groups' experts out of the choice: -inf, or 0 as Mistral 4's router (whose softmax scores are >= 0)
    const double out = r.scores == RouterScores::kSoftmaxInDtype ? 0.0 : -std::numeric_limits<double>::infinity();
    choice = grouped.masked_fill(kept.logical_not().unsqueeze(-1), out).view({tokens, r.experts});
  }
  if (r.correction_bias || r.groups > 1) {
    chosen = std::get<1>(choice.topk(r.per_token, -1));
    weights = scores.gather(1, chosen);
  } else {
    std::tie(weights, chosen) = scores.topk(r.per_token, -1);
  }
  if (r.normalize) {
    at::Tensor sum = weights.sum(-1, true);
    if (r.norm_epsilon != 0) sum = sum + r.norm_epsilon;
    if (r.norm_floor != 0) sum = sum.clamp_min(r.norm_floor);
    weights = weights / sum;
  }
  if (r.scaling != 1 && !r.scaled_after_sum) weights = weights * r.scaling;
  if (r.expert_scales) weights = weights * l.expert_scales.index_select(0, chosen.reshape(-1)).view(chosen.sizes());
  return {chosen, r.weights_fp32 ? weights : weights.to(dtype)};
}

}  // namespace

at::Tensor mixture(const MlpSpec& m, const LayerWeights& l, const at::Tensor& g, const at::Tensor& routed,
                   const NormSpec& n) {
  const RouterSpec& r = m.router;
  const at::Tensor x = g.reshape({-1, g.size(-1)});
  at::Tensor router_in = routed.reshape({-1, routed.size(-1)});
  if (r.scaled_input)
    router_in = unit_rms_norm(router_in, n.eps) * l.router_scale * std::pow(static_cast<double>(x.size(-1)), -0.5);
  const auto [chosen, weights] = route(r, l, router_in, x.scalar_type());
  const auto [sorted_experts, order] = at::sort(chosen.reshape(-1), /*stable=*/true, /*dim=*/0, /*descending=*/false);
  const ExpertOperands e = expert_operands(l.experts, sorted_experts, r.experts, x.scalar_type());
  const at::Tensor tokens = at::div(order, r.per_token, "floor");
  const at::Tensor experts_in = m.latent_size > 0 ? linear(x, l.latent_in) : x;
  // each (token, choice) row's weight, in the order of the rows
  const at::Tensor row_weights = weights.reshape(-1).index_select(0, order).unsqueeze(1);
  at::Tensor rows = experts_in.index_select(0, tokens);
  if (r.weight_on_input) rows = rows * row_weights;
  const StackedExperts& stacks = l.experts;
  const at::Tensor up =
      plus(at::_grouped_mm(rows, e.up.transpose(1, 2), e.run_ends), expert_bias(stacks.up_bias, sorted_experts));
  at::Tensor hidden;
  if (m.ungated_experts) {
    hidden = activate(up, m.activation);
  } else {
    const at::Tensor gate =
        plus(at::_grouped_mm(rows, e.gate.transpose(1, 2), e.run_ends), expert_bias(stacks.gate_bias, sorted_experts));
    hidden = gated(m, gate, up);
  }
  at::Tensor y =
      plus(at::_grouped_mm(hidden, e.down.transpose(1, 2), e.run_ends), expert_bias(stacks.down_bias, sorted_experts));
  if (!r.weight_on_input) y = y * row_weights;
  // Routing weights kept fp32 add the experts' outputs up in fp32, rounded once (transformers' fp32 buffer).
  at::Tensor out = r.weights_fp32 ? at::zeros_like(experts_in, at::kFloat).index_add_(0, tokens, y.to(at::kFloat)).to(x.scalar_type())
                                  : at::zeros_like(experts_in).index_add_(0, tokens, y.to(x.scalar_type()));
  if (m.latent_size > 0) out = linear(out, l.latent_out);
  if (r.scaled_after_sum && r.scaling != 1) out = out * r.scaling;
  if (r.shared_expert_size > 0) {
    const at::Tensor shared = expert_forward(m, l.shared_expert, x);
    if (r.shared_expert_averaged)
      out = (out + shared) / 2;
    else
      out = out + (r.shared_expert_gated ? at::sigmoid(linear(x, l.shared_expert_gate)) * shared : shared);
  }
  return out.view(g.sizes());
}

at::Tensor mlp(const MlpSpec& m, const LayerWeights& l, const at::Tensor& g, const NormSpec& n) {
  switch (m.kind) {
    case MlpKind::kExperts:
      return mixture(m, l, g, g, n);
    case MlpKind::kUngated: {
      const at::Tensor up = linear(g, l.up);
      return linear(m.activation == Activation::kXielu ? xielu(up, l) : activate(up, m.activation), l.down);
    }
    case MlpKind::kGated:
      break;
    case MlpKind::kNone:
      throw std::logic_error("mlp: the layer has no MLP");
  }
  const std::vector<at::Tensor> gate_up = linear(g, l.gate_up).chunk(2, -1);  // one matmul
  const at::Tensor gate = m.gate_multiplier != 1 ? gate_up[0] * m.gate_multiplier : gate_up[0];
  const at::Tensor out = linear(gated(m, gate, gate_up[1]), l.down);
  return m.down_multiplier != 1 ? out * m.down_multiplier : out;
}

}  // namespace prefix_scorer
