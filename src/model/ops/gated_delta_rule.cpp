#include "model/ops/gated_delta_rule.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace prefix_scorer {
namespace {

// The inputs as fp32 [b, v_heads, t, d] (q and k repeated over the value heads they serve), q and k L2-normed
// (epsilon 1e-6 inside the root, as the FLA library and transformers) and q scaled by dk^-1/2; g [b, v_heads, t, 1]
// (one a head) or [b, v_heads, t, dk] (one a key channel); beta [b, v_heads, t].
DeltaRuleInputs heads_first(const DeltaRuleInputs& in) {
  const bool per_channel = in.g.dim() == 4;
  if (in.q.dim() != 4 || in.k.sizes() != in.q.sizes() || in.v.dim() != 4 || in.v.size(0) != in.q.size(0) ||
      in.v.size(1) != in.q.size(1) || in.v.size(2) % in.q.size(2) != 0 || in.g.dim() < 3 ||
      in.g.sizes().slice(0, 3) != in.v.sizes().slice(0, 3) || (per_channel && in.g.size(3) != in.q.size(3)) ||
      in.beta.sizes() != in.v.sizes().slice(0, 3))
    throw std::invalid_argument(fmt::format(
        "gated delta rule: q [{}], k [{}], v [{}], g [{}], beta [{}] do not fit (q, k [b, t, k_heads, dk]; v [b, t, "
        "v_heads, dv] with v_heads a multiple of k_heads; g [b, t, v_heads] or [b, t, v_heads, dk]; beta [b, t, "
        "v_heads])",
        fmt::join(in.q.sizes(), ", "), fmt::join(in.k.sizes(), ", "), fmt::join(in.v.sizes(), ", "),
        fmt::join(in.g.sizes(), ", "), fmt::join(in.beta.sizes(), ", ")));
  const int64_t group = in.v.size(2) / in.q.size(2);
  auto per_value_head = [&](const at::Tensor& t) {
    return (group > 1 ? t.repeat_interleave(group, 2) : t).transpose(1, 2).to(at::kFloat);
  };
  auto l2_normed = [](const at::Tensor& t) { return t * at::rsqrt((t * t).sum(-1, true) + 1e-6); };
  const at::Tensor q = l2_normed(per_value_head(in.q));
  return {q * std::pow(static_cast<double>(q.size(-1)), -0.5), l2_normed(per_value_head(in.k)),
          in.v.transpose(1, 2).to(at::kFloat), (per_channel ? in.g : in.g.unsqueeze(-1)).transpose(1, 2).to(at::kFloat),
          in.beta.transpose(1, 2).to(at::kFloat)};
}

at::Tensor initial_state(const at::Tensor& state, const DeltaRuleInputs& h) {
  const std::vector<int64_t> shape{h.v.size(0), h.v.size(1), h.k.size(-1), h.v.size(-1)};
  if (!state.defined()) return at::zeros(shape, h.v.options());
  if (state.sizes().vec() != shape)
    throw std::invalid_argument(fmt::format("gated delta rule: state [{}], expected [{}]", fmt::join(state.sizes(), ", "),
                                            fmt::join(shape, ", ")));
  return state.to(at::kFloat);
}

// exp(decay_i - decay_j) for tokens j <= i of a chunk, 0 above; `decay` [..., chunk, d] gives [..., chunk, chunk, d].
at::Tensor decay_between(const at::Tensor& decay) {
  const int64_t chunk = decay.size(-2);
  const at::Tensor above = at::ones({chunk, chunk}, decay.options().dtype(at::kBool)).triu(1).unsqueeze(-1);
  return (decay.unsqueeze(-2) - decay.unsqueeze(-3)).masked_fill(above, -std::numeric_limits<float>::infinity()).exp();
}

// One decay a head: the products are matmuls, times each pair's decay.
std::pair<at::Tensor, at::Tensor> decayed_products_per_head(const at::Tensor& q, const at::Tensor& k,
                                                            const at::Tensor& k_beta, const at::Tensor& decay) {
  const at::Tensor between = decay_between(decay).squeeze(-1);
  const at::Tensor kt = k.transpose(-1, -2);
  return {at::matmul(k_beta, kt) * between, at::matmul(q, kt) * between};
}

// One decay a key channel (KDA): each pair's product sums its channels each decayed on its own. Within blocks of 16
// tokens pairwise, as transformers' chunk_kimi_delta_attention sums them; a later token i against a block's token j
// through the block's last token r, (x_i e^(D_i - D_r)) . (k_j e^(D_r - D_j)), one matmul a block, every factor at
// most 1 (no factoring across a whole chunk, which overflows where a chunk decays past e^-88). A chunk at a time.
std::pair<at::Tensor, at::Tensor> decayed_products_per_channel(const at::Tensor& q, const at::Tensor& k,
                                                               const at::Tensor& k_beta, const at::Tensor& decay) {
  const int64_t chunk = decay.size(-2), block = chunk % 16 == 0 ? 16 : chunk;
  std::vector<at::Tensor> system, within;
  for (int64_t c = 0; c < decay.size(2); ++c) {
    const at::Tensor d = decay.select(2, c), kc = k.select(2, c), qc = q.select(2, c), kbc = k_beta.select(2, c);
    at::Tensor s = at::zeros({d.size(0), d.size(1), chunk, chunk}, d.options()), w = at::zeros_like(s);
    for (int64_t start = 0; start < chunk; start += block) {
      auto rows = [&](const at::Tensor& t) { return t.narrow(-2, start, block); };
      const at::Tensor keys_decayed = rows(kc).unsqueeze(-3) * decay_between(rows(d));  // k_j decayed to token i
      s.narrow(-2, start, block).narrow(-1, start, block).copy_((rows(kbc).unsqueeze(-2) * keys_decayed).sum(-1));
      w.narrow(-2, start, block).narrow(-1, start, block).copy_((rows(qc).unsqueeze(-2) * keys_decayed).sum(-1));
      const int64_t after = start + block, later = chunk - after;
      if (later == 0) continue;
      const at::Tensor last = d.narrow(-2, after - 1, 1);
      const at::Tensor keys_to_last = (rows(kc) * (last - rows(d)).exp()).transpose(-1, -2);
      const at::Tensor from_last = (d.narrow(-2, after, later) - last).exp();
      s.narrow(-2, after, later).narrow(-1, start, block).copy_(at::matmul(kbc.narrow(-2, after, later) * from_last, keys_to_last));
      w.narrow(-2, after, later).narrow(-1, start, block).copy_(at::matmul(qc.narrow(-2, after, later) * from_last, keys_to_last));
    }
    system.push_back(s);
    within.push_back(w);
  }
  return {at::stack(system, 2), at::stack(within, 2)};
}

}  // namespace

std::pair<at::Tensor, at::Tensor> recurrent_gated_delta_rule(const DeltaRuleInputs& in, const at::Tensor& state) {
  const DeltaRuleInputs h = heads_first(in);
  at::Tensor s = initial_state(state, h);
  const int64_t tokens = h.v.size(2);
  std::vector<at::Tensor> outputs;
  outputs.reserve(tokens);
  for (int64_t i = 0; i < tokens; ++i) {
    const at::Tensor q = h.q.select(2, i), k = h.k.select(2, i), v = h.v.select(2, i);
    s = s * h.g.select(2, i).exp().unsqueeze(-1);  // [b, heads, 1 or dk, 1]: a row of s a key channel
    const at::Tensor predicted = (s * k.unsqueeze(-1)).sum(-2);
    const at::Tensor correction = (v - predicted) * h.beta.select(2, i).unsqueeze(-1);
    s = s + k.unsqueeze(-1) * correction.unsqueeze(-2);
    outputs.push_back((s * q.unsqueeze(-1)).sum(-2));
  }
  return {at::stack(outputs, 2).transpose(1, 2).to(in.v.scalar_type()).contiguous(), s};
}

std::pair<at::Tensor, at::Tensor> chunked_gated_delta_rule(const DeltaRuleInputs& in, const at::Tensor& state,
                                                           int64_t chunk) {
  if (chunk < 1) throw std::invalid_argument(fmt::format("gated delta rule: chunk {} must be positive", chunk));
  DeltaRuleInputs h = heads_first(in);
  at::Tensor s = initial_state(state, h);
  const int64_t b = h.v.size(0), heads = h.v.size(1), tokens = h.v.size(2);
  const int64_t pad = (chunk - tokens % chunk) % chunk, chunks = (tokens + pad) / chunk;
  // Padded to whole chunks (zero keys, values, decays and betas change neither the outputs before them nor, as the
  // last chunk's tail, the state: a zero beta writes nothing and a zero g decays nothing), then [b, heads, chunks,
  // chunk, d].
  auto blocks = [&](const at::Tensor& t) {
    return at::constant_pad_nd(t, {0, 0, 0, pad}).view({b, heads, chunks, chunk, t.size(-1)});
  };
  const at::Tensor beta = at::constant_pad_nd(h.beta, {0, pad}).view({b, heads, chunks, chunk, 1});
  const at::Tensor q = blocks(h.q), k = blocks(h.k), v = blocks(h.v);
  const at::Tensor k_beta = k * beta, v_beta = v * beta;
  // The log decay summed from each chunk's start [b, heads, chunks, chunk, 1 or dk].
  const at::Tensor decay =
      at::constant_pad_nd(h.g, {0, 0, 0, pad}).view({b, heads, chunks, chunk, h.g.size(-1)}).cumsum(-2);
  // The UT transform's system (the strictly lower part of k_beta_i . k_j decayed from token j to token i of a
  // chunk) and the queries' scores within their chunk (q_i . k_j so decayed, j <= i).
  const auto [system, within] = decay.size(-1) == 1 ? decayed_products_per_head(q, k, k_beta, decay)
                                                    : decayed_products_per_channel(q, k, k_beta, decay);
  const at::Tensor unit_lower = system.tril(-1) + at::eye(chunk, system.options());
  const at::Tensor new_values = at::linalg_solve_triangular(unit_lower, v_beta, /*upper=*/false, /*left=*/true,
                                                            /*unitriangular=*/true);
  const at::Tensor keys_reading_state =
      at::linalg_solve_triangular(unit_lower, k_beta * decay.exp(), false, true, true);
  const at::Tensor q_decayed = q * decay.exp();
  const at::Tensor last = decay.narrow(-2, chunk - 1, 1);  // [b, heads, chunks, 1, 1 or dk]
  const at::Tensor k_to_end = k * (last - decay).exp();
  const at::Tensor chunk_decay = last.exp().transpose(-1, -2);  // [b, heads, chunks, 1 or dk, 1]: rows of s
  std::vector<at::Tensor> outputs;
  outputs.reserve(chunks);
  for (int64_t c = 0; c < chunks; ++c) {
    const at::Tensor corrected = new_values.select(2, c) - at::matmul(keys_reading_state.select(2, c), s);
    outputs.push_back(at::matmul(q_decayed.select(2, c), s) + at::matmul(within.select(2, c), corrected));
    s = s * chunk_decay.select(2, c) + at::matmul(k_to_end.select(2, c).transpose(-1, -2), corrected);
  }
  const at::Tensor out = at::stack(outputs, 2).view({b, heads, chunks * chunk, h.v.size(-1)}).narrow(2, 0, tokens);
  return {out.transpose(1, 2).to(in.v.scalar_type()).contiguous(), s};
}

std::pair<at::Tensor, at::Tensor> causal_conv1d_silu(const at::Tensor& x, const at::Tensor& weight,
                                                     const at::Tensor& history, const at::Tensor& lengths) {
  return causal_conv1d(x, weight, {}, history, lengths, true);
}

std::pair<at::Tensor, at::Tensor> causal_conv1d(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                                const at::Tensor& history, const at::Tensor& lengths, bool silu) {
  const int64_t channels = x.size(1), taps = weight.size(1);
  const at::Tensor before = history.defined() ? history.to(weight.scalar_type())
                                              : at::zeros({x.size(0), channels, taps - 1}, weight.options());
  const at::Tensor joined = at::cat({before, x.to(weight.scalar_type())}, -1);
  const std::vector<int64_t> stride{1}, padding{0}, dilation{1};  // spelled out: the overloads take brace lists alike
  const at::Tensor convolved =
      at::conv1d(joined, weight.unsqueeze(1), bias, stride, at::IntArrayRef(padding), dilation, channels);
  const at::Tensor out = silu ? at::silu(convolved) : convolved;
  if (!lengths.defined())
    return {out.to(x.scalar_type()), joined.narrow(-1, joined.size(-1) - (taps - 1), taps - 1).contiguous()};
  // Row r's inputs [lengths[r], lengths[r] + taps - 1) of `joined`: the last taps - 1 before its padding.
  const at::Tensor taken = (lengths.view({-1, 1, 1}) + at::arange(taps - 1, lengths.options()).view({1, 1, -1}))
                               .expand({x.size(0), channels, taps - 1});
  return {out.to(x.scalar_type()), joined.gather(-1, taken)};
}

}  // namespace prefix_scorer
