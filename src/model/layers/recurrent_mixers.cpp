// The recurrent mixers, each from its state before the forward's tokens to its state after: Gated DeltaNet, LFM2's
// short convolution and Mamba2; and Falcon-H1's attention beside Mamba2.

#include "model/layers/mixer.h"

#include "model/layers/block_ops.h"
#include "model/ops/gated_delta_rule.h"
#include "model/ops/linear.h"
#include "model/ops/mamba2_scan.h"

#include <vector>

namespace prefix_scorer {
namespace {

// x through `first`, then through `second` where it is defined (a low-rank pair), else through `first` alone.
at::Tensor linear_pair(const at::Tensor& x, const Linear& first, const Linear& second) {
  const at::Tensor once = linear(x, first);
  return second.defined() ? linear(once, second) : once;
}

// KDA's log decay [b, t, heads, key_dim] in fp32 (see gated_delta_net).
at::Tensor kda_decay(const DeltaNetSpec& d, const LayerWeights& l, const at::Tensor& h) {
  const at::Tensor f = (linear_pair(h, l.delta_a, l.delta_a_up).to(at::kFloat) + l.delta_dt_bias.to(at::kFloat))
                           .view({h.size(0), h.size(1), d.key_heads, d.key_dim});
  const at::Tensor rate = l.delta_a_log.to(at::kFloat).exp().view({d.key_heads, 1});
  const at::Tensor g = d.gate_lower_bound != 0 ? d.gate_lower_bound * at::sigmoid(rate * f) : -rate * at::softplus(f);
  return d.decay_in_model_dtype ? g.to(h.scalar_type()).to(at::kFloat) : g;
}

// A Gated DeltaNet layer over its normed input `h` [b, t, hidden]: q, k and v projected and convolved (causal,
// SiLU), the gated delta rule (gated_delta_rule.h) with beta = sigmoid(b) (times beta_scale) and the log decay
// g = -exp(A_log) softplus(a + dt_bias) in fp32, each value head's output RMS-normed (times its weight, in the model
// dtype) and gated by SiLU of z (in fp32), then out_proj. Each row continues from `before` (its state and
// convolution history; empty: zeros) and leaves in `after` the state and history at its last real token: padding
// (at a row's end) gets g = 0 and beta = 0, which leave a state as it is, and the history is taken before it.
// Kimi Delta Attention (DeltaNetSpec::kimi) differs in three places: the decay, one a key channel, is
// -exp(A_log) softplus(f + dt_bias) with f = f_b(f_a(h)) (Ling 3's: f_proj(h), and under its safe gate
// bound sigmoid(exp(A_log) (f + dt_bias)), rounded to the model dtype); the gate is sigmoid of g_b(g_a(h)) (Ling 3's:
// g_proj(h)); the norm's weight multiplies in fp32 before the gate, and the product is cast back once.
at::Tensor gated_delta_net(const DeltaNetSpec& d, const LayerWeights& l, const at::Tensor& h, const DeviceInputs& in,
                           const std::vector<at::Tensor>& before, LayerCache& after) {
  const int64_t b = h.size(0), t = h.size(1);
  const at::Tensor state = before.empty() ? at::Tensor() : before[0], history = before.empty() ? at::Tensor() : before[1];
  const auto [mixed, history_after] =
      causal_conv1d_silu(linear(h, l.delta_qkv).transpose(1, 2), l.delta_conv, history, in.row_lengths);
  const std::vector<at::Tensor> qkv =
      mixed.transpose(1, 2).split_with_sizes({d.key_width(), d.key_width(), d.value_width()}, -1);
  at::Tensor g = d.kimi ? kda_decay(d, l, h)
                        : -l.delta_a_log.to(at::kFloat).exp() * at::softplus(linear(h, l.delta_a).to(at::kFloat) + l.delta_dt_bias);
  at::Tensor beta = at::sigmoid(linear(h, l.delta_b));
  if (d.beta_scale != 1) beta = beta * d.beta_scale;
  if (in.token_valid.defined()) {
    const at::Tensor real = in.token_valid.unsqueeze(-1);
    g = g * (d.kimi ? real.unsqueeze(-1) : real);
    beta = beta * real.to(beta.scalar_type());
  }
  const DeltaRuleInputs rule{qkv[0].reshape({b, t, d.key_heads, d.key_dim}),
                             qkv[1].reshape({b, t, d.key_heads, d.key_dim}),
                             qkv[2].reshape({b, t, d.value_heads, d.value_dim}), g, beta};
  // One token a row (a decode step) token by token, as transformers steps; else in chunks.
  const auto [out, state_after] = t == 1 ? recurrent_gated_delta_rule(rule, state) : chunked_gated_delta_rule(rule, state);
  after = {{}, {state_after, history_after}};
  at::Tensor gated;
  if (d.kimi) {
    const at::Tensor gate = linear_pair(h, l.delta_z, l.delta_z_up).view({b, t, d.value_heads, d.value_dim});
    gated = l.delta_norm.to(at::kFloat) * unit_rms_norm(out.to(at::kFloat), d.norm_eps) * at::sigmoid(gate.to(at::kFloat));
  } else {
    const at::Tensor z = linear(h, l.delta_z).view({b, t, d.value_heads, d.value_dim});
    gated = l.delta_norm * unit_rms_norm(out, d.norm_eps) * at::silu(z.to(at::kFloat));
  }
  return linear(gated.to(h.scalar_type()).reshape({b, t, d.value_width()}), l.o);
}

// LFM2's short convolution over its normed input `h` [b, t, hidden]: B, C and x projected, B * x convolved (causal,
// no activation) from `before` (its history; empty: zeros), times C, then out_proj; `after` takes the history at
// each row's last real token.
at::Tensor short_conv(const LayerWeights& l, const at::Tensor& h, const DeviceInputs& in,
                      const std::vector<at::Tensor>& before, LayerCache& after) {
  const std::vector<at::Tensor> bcx = linear(h, l.conv_in).chunk(3, -1);
  const auto [convolved, history_after] = causal_conv1d((bcx[0] * bcx[2]).transpose(1, 2), l.conv, l.conv_bias,
                                                        before.empty() ? at::Tensor() : before[0], in.row_lengths, false);
  after = {{}, {history_after}};
  return linear(bcx[1] * convolved.transpose(1, 2), l.o);
}

// Mamba2's output y [b, t, heads, head_dim] and its gate z, as Mamba2Gate says: RMS-normed over each group of heads'
// values in fp32, SiLU(z) taken in fp32 before or after; [b, t, inner] in y's dtype.
at::Tensor gated_group_norm(const Mamba2Spec& m, const at::Tensor& y, const at::Tensor& z, const at::Tensor& weight) {
  const int64_t b = y.size(0), t = y.size(1);
  if (m.gate == Mamba2Gate::kGateOnly) return (y * at::silu(z)).reshape({b, t, m.inner()});
  auto grouped_norm = [&](const at::Tensor& x) {
    return unit_rms_norm(x.reshape({b, t, m.groups, -1}), m.norm_eps).reshape({b, t, m.inner()});
  };
  const at::Tensor gate = at::silu(z.to(at::kFloat)).reshape({b, t, m.inner()});
  const at::Tensor values = y.to(at::kFloat).reshape({b, t, m.inner()});
  switch (m.gate) {
    case Mamba2Gate::kNormThenGate:
      return (weight * grouped_norm(values) * gate).to(y.scalar_type());
    case Mamba2Gate::kGateThenNormFp32Weight:
      return (weight * grouped_norm(values * gate)).to(y.scalar_type());
    default:  // the weight in y's dtype, after the cast (Granite 4, Nemotron-H)
      return weight * grouped_norm(values * gate).to(y.scalar_type());
  }
}

}  // namespace

at::Tensor mamba2(const Mamba2Spec& m, const LayerWeights& l, const at::Tensor& h, const DeviceInputs& in,
                  const std::vector<at::Tensor>& before, LayerCache& after) {
  const int64_t b = h.size(0), t = h.size(1);
  const at::Tensor state = before.empty() ? at::Tensor() : before[0], history = before.empty() ? at::Tensor() : before[1];
  at::Tensor projected = linear(m.in_multiplier != 1 ? h * m.in_multiplier : h, l.mamba_in);
  if (l.mamba_mup.defined()) projected = projected * l.mamba_mup;
  const std::vector<at::Tensor> zxbcdt = projected.split_with_sizes({m.inner(), m.conv_channels(), m.heads}, -1);
  const auto [convolved, history_after] =
      causal_conv1d(zxbcdt[1].transpose(1, 2), l.mamba_conv, l.mamba_conv_bias, history, in.row_lengths, true);
  const int64_t group_width = m.groups * m.state_size;
  const std::vector<at::Tensor> xbc = convolved.transpose(1, 2).split_with_sizes({m.inner(), group_width, group_width}, -1);
  const bool step = t == 1 && state.defined();
  at::Tensor dt = at::softplus(zxbcdt[2] + l.mamba_dt_bias);
  dt = m.dt_max > 0 ? dt.clamp(m.dt_min, m.dt_max) : dt.clamp_min(m.dt_min);
  if (in.token_valid.defined()) dt = dt * in.token_valid.unsqueeze(-1).to(dt.scalar_type());
  const ScanInputs scan{xbc[0].reshape({b, t, m.heads, m.head_dim}), dt, -l.mamba_a_log.to(at::kFloat).exp(),
                        xbc[1].reshape({b, t, m.groups, m.state_size}), xbc[2].reshape({b, t, m.groups, m.state_size}),
                        l.mamba_d};
  const auto [y, state_after] = step ? scan_step(scan, state) : chunked_scan(scan, state, m.chunk);
  after = {{}, {state_after, history_after}};
  const at::Tensor normed = gated_group_norm(m, y, zxbcdt[0].reshape({b, t, m.heads, m.head_dim}), l.mamba_norm);
  return linear(normed.to(h.scalar_type()), l.mamba_out);
}

std::vector<at::Tensor> state_before(const DeviceInputs& in, KvCache* cache, const SharedPrefixes* shared,
                                     int64_t index) {
  if (cache != nullptr && !cache->layer(index).empty()) return cache->layer(index).state;
  if (shared != nullptr) return shared->layers[index].rows(in.row_prefix).state;
  return {};
}

namespace {

// Mamba2's state (fp32, a [head_dim, state_size] a head) and convolution history; its chunked scan holds, per token
// fed, about 5 fp32 rows of its chunk per head (the within-chunk decays, their masks and scores), B and C repeated
// for every head, and a few inner-wide fp32 rows (x, y and the gate).
MixerCosts mamba2_costs(const Mamba2Spec& m, int64_t dtype_bytes) {
  MixerCosts costs;
  costs.state_bytes = 4 * m.heads * m.head_dim * m.state_size + dtype_bytes * m.conv_channels() * (m.taps - 1);
  costs.workspace_per_token = 4 * (5 * m.chunk * m.heads + 2 * m.heads * m.state_size + 3 * m.inner());
  return costs;
}

}  // namespace

// Nothing kept a token: a state a row that a prefix's rows continue from, so cascade stays exact. A Gated DeltaNet's
// state is fp32 [key_dim, value_dim] a value head beside its convolution's history, and its chunked rule holds, per
// token fed and value head, about 4 fp32 rows of its chunk (64), key and value widths (the decayed keys and queries,
// the corrected values, the within-chunk scores), and KDA's about 3 fp32 [16, key_dim] rows more (each pair's decays
// of a key channel within a block of 16, the keys so decayed, their products); a short convolution keeps its last
// taps - 1 inputs.
MixerCosts recurrent_costs(const ModelSpec& spec, int64_t layer, int64_t dtype_bytes) {
  const LayerSpec& s = spec.layers.at(layer);
  if (s.mixer == MixerKind::kMamba2) return mamba2_costs(s.mamba, dtype_bytes);
  MixerCosts costs;
  if (s.mixer == MixerKind::kShortConv) {
    costs.state_bytes = dtype_bytes * spec.hidden_size * (s.short_conv.taps - 1);
    return costs;
  }
  const DeltaNetSpec& d = s.delta;
  costs.state_bytes = 4 * d.value_heads * d.key_dim * d.value_dim + dtype_bytes * d.conv_channels() * (d.taps - 1);
  costs.workspace_per_token = 16 * d.value_heads * (64 + d.key_dim + d.value_dim);
  if (d.kimi) costs.workspace_per_token += 12 * d.value_heads * 16 * d.key_dim;
  return costs;
}

// Attention's keys and values and scores beside Mamba2's state and scan.
MixerCosts attention_and_mamba2_costs(const ModelSpec& spec, int64_t layer, int64_t dtype_bytes) {
  MixerCosts costs = attention_costs(spec, layer, dtype_bytes);
  const MixerCosts mamba = mamba2_costs(spec.layers.at(layer).mamba, dtype_bytes);
  costs.state_bytes = mamba.state_bytes;
  costs.workspace_per_token = mamba.workspace_per_token;
  return costs;
}

at::Tensor recurrent_mixer(const LayerSpec& s, const NormSpec&, const LayerWeights& l, const at::Tensor& h,
                           const MixerContext& context) {
  const DeviceInputs& in = context.in();
  KvCache* cache = context.cache();
  const std::vector<at::Tensor> before = state_before(in, cache, context.shared(), context.index);
  LayerCache after;
  const at::Tensor out = s.mixer == MixerKind::kShortConv ? short_conv(l, h, in, before, after)
                         : s.mixer == MixerKind::kMamba2  ? mamba2(s.mamba, l, h, in, before, after)
                                                          : gated_delta_net(s.delta, l, h, in, before, after);
  if (cache != nullptr) cache->append_layer(context.index, after);  // the state after replaces the one before
  return out;
}

// Mamba2 (its state from state_before) and attention (its input times attention_in_multiplier), each output times its
// multiplier, added. The Mamba2 state after goes into the layer's cache with attention's keys and values.
at::Tensor attention_and_mamba2_mixer(const LayerSpec& s, const NormSpec& n, const LayerWeights& l, const at::Tensor& h,
                                      const MixerContext& context) {
  const DeviceInputs& in = context.in();
  LayerCache after;
  const at::Tensor mamba =
      mamba2(s.mamba, l, h, in, state_before(in, context.cache(), context.shared(), context.index), after);
  const at::Tensor attention_in = s.attention_in_multiplier != 1 ? h * s.attention_in_multiplier : h;
  const at::Tensor attended = attention(s.attention, n, l, attention_in, {context.parts.front()}, context.index,
                                       context.read_later, after.state);
  return mamba * s.mamba_out_multiplier + attended * s.attention_out_multiplier;
}

}  // namespace prefix_scorer
