#include "model/checkpoint/stacked_weights.h"

#include <algorithm>
#include <array>
#include <vector>

namespace prefix_scorer {
namespace {

// `parts` (rows of one matrix, or biases) stacked into one tensor, each part then a view of its rows there.
at::Tensor stack_rows(const std::vector<at::Tensor*>& parts) {
  std::vector<at::Tensor> pieces;
  for (const at::Tensor* p : parts) pieces.push_back(*p);
  at::Tensor stacked = at::cat(pieces);
  int64_t row = 0;
  for (at::Tensor* p : parts) {
    const int64_t rows = p->size(0);
    *p = stacked.narrow(0, row, rows);
    row += rows;
  }
  return stacked;
}

// Projections of one input stacked into one Linear (one matmul a forward), each part then a view of its rows there.
// Biases come all or none (the config sets them together). Parts not all plain (kept as codes) stay apart in the
// stack, run one after another.
Linear stack_linears(const std::vector<Linear*>& parts) {
  if (std::any_of(parts.begin(), parts.end(), [](const Linear* p) { return !p->weight.defined(); })) {
    Linear stack;
    for (const Linear* p : parts) stack.parts.push_back(*p);
    return stack;
  }
  std::vector<at::Tensor*> weights, biases;
  for (Linear* p : parts) {
    weights.push_back(&p->weight);
    biases.push_back(&p->bias);
  }
  return {stack_rows(weights), parts.front()->bias.defined() ? stack_rows(biases) : at::Tensor()};
}

}  // namespace

// Falcon-H1's multipliers as tensors of the rows they scale: z, x, B, C and dt's of in_proj (in the model dtype, a
// buffer transformers keeps so), and the keys' and values' of q, k, v (fp32: times a Python float, as transformers).
void multiplier_rows(LayerWeights& l, const LayerSpec& s) {
  const Mamba2Spec& m = s.mamba;
  const auto& mup = m.projection_multipliers;
  if (std::any_of(mup.begin(), mup.end(), [](double v) { return v != 1; })) {
    const int64_t bc = m.groups * m.state_size;
    const std::array<int64_t, 5> rows{m.inner(), m.inner(), bc, bc, m.heads};
    std::vector<at::Tensor> parts;
    for (size_t k = 0; k < rows.size(); ++k) parts.push_back(at::full({rows[k]}, mup[k], at::kFloat));
    l.mamba_mup = at::cat(parts).to(l.mamba_conv.device(), l.mamba_conv.scalar_type());  // the model's dtype
  }
  const AttentionSpec& a = s.attention;
  if ((a.key_multiplier != 1 || a.value_multiplier != 1) && l.qkv.defined()) {
    l.qkv_scale = at::ones({l.qkv.out_features()}, at::TensorOptions().device(l.device).dtype(at::kFloat));
    l.qkv_scale.narrow(0, a.q_width(), a.kv_width()).fill_(a.key_multiplier);
    if (!a.keys_as_values) l.qkv_scale.narrow(0, a.q_width() + a.kv_width(), a.kv_width()).fill_(a.value_multiplier);
  }
}

void stack_projections(LayerWeights& l, const AttentionSpec& a) {
  if (l.kv_a.defined()) {  // latent attention: the query's input projection and kv_a; q_proj's rows have no bias
    Linear& q_in = l.q_a.defined() ? l.q_a : l.q;
    if (l.kv_a.bias.defined() && !q_in.bias.defined())
      q_in.bias = at::zeros({q_in.out_features()}, l.kv_a.bias.options());
    l.qkv = stack_linears({&q_in, &l.kv_a});
  }
  if (l.k.defined()) {  // values that are the keys' projection have no rows of their own
    l.qkv = a.keys_as_values ? stack_linears({&l.q, &l.k}) : stack_linears({&l.q, &l.k, &l.v});
    if (a.qk_norm == QkNorm::kPerHead)  // a row per head of q and then of k: both normed by one op
      l.qk_norm = at::cat({l.q_norm.expand({a.heads, a.head_dim}), l.k_norm.expand({a.kv_heads, a.head_dim})});
  }
  if (l.gate.defined()) l.gate_up = stack_linears({&l.gate, &l.up});
}

}  // namespace prefix_scorer
