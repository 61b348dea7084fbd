#include "model/ops/rope.h"

#include <algorithm>
#include <cmath>

namespace prefix_scorer {

namespace {

// YaRN: frequencies that turn fewer than beta_slow times over the original context are interpolated (divided by
// factor), those that turn more than beta_fast times kept, a linear ramp between; in transformers' float32 steps.
at::Tensor yarn_frequencies(const RopeConfig& rope, int64_t dim) {
  const double original = static_cast<double>(rope.original_max_position_embeddings);
  auto correction_dim = [&](double rotations) {
    return static_cast<double>(dim) * std::log(original / (rotations * 2 * M_PI)) / (2 * std::log(rope.theta));
  };
  double low = correction_dim(rope.beta_fast), high = correction_dim(rope.beta_slow);
  if (rope.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(dim - 1));
  if (low == high) high += 0.001;
  const at::Tensor pos_freqs = at::pow(rope.theta, at::arange(0, dim, 2, at::kLong).to(at::kFloat) / static_cast<double>(dim));
  const at::Tensor extrapolation = 1.0 / pos_freqs;
  const at::Tensor interpolation = 1.0 / (rope.factor * pos_freqs);
  const at::Tensor ramp = at::clamp((at::arange(dim / 2, at::kFloat) - low) / (high - low), 0, 1);
  const at::Tensor extrapolation_factor = 1 - ramp;
  return interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor;
}

}  // namespace

at::Tensor inverse_frequencies(const RopeConfig& rope, int64_t head_dim, bool long_factors) {
  const int64_t dim = rope.rotary_dim(head_dim);
  const auto exponents = at::arange(0, dim, 2, at::kLong).to(at::kFloat) / static_cast<double>(dim);
  if (rope.type == RopeType::kLongRope) {
    const std::vector<double>& factors = long_factors ? rope.long_factor : rope.short_factor;
    const at::Tensor ext = at::tensor(factors, at::kDouble).to(at::kFloat);
    return 1.0 / (ext * at::pow(rope.theta, exponents));
  }
  at::Tensor inv_freq = 1.0 / at::pow(rope.theta, exponents);
  if (rope.type == RopeType::kProportional) {
    // The first int(partial_rotary_factor * head_dim / 2) frequencies turn, the others are zero (no rotation).
    const auto turning = static_cast<int64_t>(std::floor(rope.partial_rotary_factor * static_cast<double>(dim) / 2));
    return at::cat({inv_freq.narrow(0, 0, turning), at::zeros({dim / 2 - turning}, at::kFloat)}) / rope.factor;
  }
  if (rope.type == RopeType::kLinear) return inv_freq / rope.factor;
  if (rope.type == RopeType::kYarn) return yarn_frequencies(rope, dim);
  if (rope.type != RopeType::kLlama3) return inv_freq;

  // Llama 3: long wavelengths are divided by `factor`, short ones kept, the band between interpolated.
  const double old_len = static_cast<double>(rope.original_max_position_embeddings);
  const double low_freq_wavelen = old_len / rope.low_freq_factor;
  const double high_freq_wavelen = old_len / rope.high_freq_factor;
  const at::Tensor wavelen = 2 * M_PI / inv_freq;
  const at::Tensor scaled = at::where(wavelen > low_freq_wavelen, inv_freq / rope.factor, inv_freq);
  const at::Tensor smooth = (old_len / wavelen - rope.low_freq_factor) / (rope.high_freq_factor - rope.low_freq_factor);
  const at::Tensor smoothed = (1 - smooth) * scaled / rope.factor + smooth * scaled;
  const at::Tensor medium = (wavelen >= high_freq_wavelen).logical_and(wavelen <= low_freq_wavelen);
  return at::where(medium, smoothed, scaled);
}

at::Tensor rope_variant_frequencies(const RopeConfig& rope, int64_t head_dim) {
  const at::Tensor configured = inverse_frequencies(rope, head_dim);
  if (rope.type != RopeType::kLongRope) return configured.unsqueeze(0);
  return at::stack({configured, inverse_frequencies(rope, head_dim, /*long_factors=*/true)});
}

RotaryTables rotary_tables(const at::Tensor& inv_freq, const at::Tensor& positions, at::ScalarType dtype,
                           double scale) {
  const at::Tensor per_row = inv_freq.dim() == 2 ? inv_freq.unsqueeze(1) : inv_freq;  // [b, 1, d/2] or [d/2]
  const at::Tensor freqs = positions.to(inv_freq.device(), at::kFloat).unsqueeze(-1) * per_row;  // [b, len, d/2]
  const at::Tensor angles = at::cat({freqs, freqs}, -1).unsqueeze(2);                             // [b, len, 1, d]
  const at::Tensor cos = scale == 1.0 ? angles.cos() : angles.cos() * scale;
  const at::Tensor sin = (scale == 1.0 ? angles.sin() : angles.sin() * scale).to(dtype);
  const int64_t half = freqs.size(-1);
  RotaryTables tables{cos.to(dtype), at::cat({-sin.narrow(-1, 0, half), sin.narrow(-1, half, half)}, -1), {}, {}};
  tables.cos_by_head = tables.cos.transpose(1, 2);
  tables.sin_by_head = tables.sin_signed.transpose(1, 2);
  return tables;
}

at::Tensor apply_rotary(const at::Tensor& x, const RotaryTables& tables, bool head_major) {
  const int64_t dim = tables.cos.size(-1);
  const at::Tensor& cos = head_major ? tables.cos_by_head : tables.cos;
  const at::Tensor& sin = head_major ? tables.sin_by_head : tables.sin_signed;
  if (cpu::can_rotate(x, cos, sin)) return cpu::apply_rotary(x, cos, sin);
  auto rotate = [&](const at::Tensor& part) { return part * cos + at::roll(part, dim / 2, -1) * sin; };
  if (dim == x.size(-1)) return rotate(x);
  return at::cat({rotate(x.narrow(-1, 0, dim)), x.narrow(-1, dim, x.size(-1) - dim)}, -1);
}

}  // namespace prefix_scorer
