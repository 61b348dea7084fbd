#include "model/rope.h"

#include <cmath>

namespace prefix_scorer {

at::Tensor inverse_frequencies(const RopeConfig& rope, int64_t head_dim, bool long_factors) {
  const int64_t dim = rope.rotary_dim(head_dim);
  const auto exponents = at::arange(0, dim, 2, at::kLong).to(at::kFloat) / static_cast<double>(dim);
  if (rope.type == RopeType::kLongRope) {
    const std::vector<double>& factors = long_factors ? rope.long_factor : rope.short_factor;
    const at::Tensor ext = at::tensor(factors, at::kDouble).to(at::kFloat);
    return 1.0 / (ext * at::pow(rope.theta, exponents));
  }
  at::Tensor inv_freq = 1.0 / at::pow(rope.theta, exponents);
  if (rope.type == RopeType::kLinear) return inv_freq / rope.factor;
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

RotaryTables rotary_tables(const at::Tensor& inv_freq, const at::Tensor& positions, at::ScalarType dtype,
                           double scale) {
  const at::Tensor freqs = positions.to(inv_freq.device(), at::kFloat).unsqueeze(-1) * inv_freq;  // [b, len, d/2]
  const at::Tensor angles = at::cat({freqs, freqs}, -1).unsqueeze(1);                             // [b, 1, len, d]
  if (scale == 1.0) return {angles.cos().to(dtype), angles.sin().to(dtype)};
  return {(angles.cos() * scale).to(dtype), (angles.sin() * scale).to(dtype)};
}

at::Tensor apply_rotary(const at::Tensor& x, const RotaryTables& tables) {
  const int64_t dim = tables.cos.size(-1);
  const at::Tensor part = dim == x.size(-1) ? x : x.narrow(-1, 0, dim);
  const int64_t half = dim / 2;
  const at::Tensor rotated = at::cat({-part.narrow(-1, half, half), part.narrow(-1, 0, half)}, -1);
  const at::Tensor out = part * tables.cos + rotated * tables.sin;
  return dim == x.size(-1) ? out : at::cat({out, x.narrow(-1, dim, x.size(-1) - dim)}, -1);
}

}  // namespace prefix_scorer
