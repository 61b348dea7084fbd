#include "rope.h"

#include <cmath>

namespace prefix_scorer {

at::Tensor inverse_frequencies(const RopeConfig& rope, int64_t head_dim) {
  const auto exponents = at::arange(0, head_dim, 2, at::kLong).to(at::kFloat) / static_cast<double>(head_dim);
  at::Tensor inv_freq = 1.0 / at::pow(rope.theta, exponents);
  if (rope.type == "linear") return inv_freq / rope.factor;
  if (rope.type != "llama3") return inv_freq;

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

RotaryTables rotary_tables(const at::Tensor& inv_freq, const at::Tensor& positions, at::ScalarType dtype) {
  const at::Tensor freqs = positions.to(inv_freq.device(), at::kFloat).unsqueeze(-1) * inv_freq;  // [b, len, d/2]
  const at::Tensor angles = at::cat({freqs, freqs}, -1).unsqueeze(1);                             // [b, 1, len, d]
  return {angles.cos().to(dtype), angles.sin().to(dtype)};
}

at::Tensor apply_rotary(const at::Tensor& x, const RotaryTables& tables) {
  const int64_t half = x.size(-1) / 2;
  const at::Tensor rotated = at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * tables.cos + rotated * tables.sin;
}

}  // namespace prefix_scorer
