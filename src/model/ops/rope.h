#pragma once
// Rotary position embedding, computed the way Hugging Face transformers computes it (fp32 tables).

#include "model/config/model_config.h"
#include "model/forward_batch.h"

#include <ATen/ATen.h>

namespace prefix_scorer {

// Inverse frequencies [rotary_dim / 2], float32 on the CPU, with the config's frequency scaling applied (for
// longrope, the short or the long factors).
at::Tensor inverse_frequencies(const RopeConfig& rope, int64_t head_dim, bool long_factors = false);

// The rope's variants, [variants, rotary_dim / 2]: the frequencies as configured, and for longrope a second row,
// its long factors' (ForwardBatch::rope_variant picks a row per sequence).
at::Tensor rope_variant_frequencies(const RopeConfig& rope, int64_t head_dim);

struct RotaryTables {
  at::Tensor cos;         // [batch, len, 1, rotary_dim] in the model dtype
  at::Tensor sin_signed;  // sin in the model dtype with its first half negated (see apply_rotary)
  at::Tensor cos_by_head, sin_by_head;  // the same as [batch, 1, len, rotary_dim] views, for head-major x
};

// Tables for `positions` [batch, len], scaled by `scale` (longrope's attention factor) in float32; computed on
// the device of `inv_freq`, which is [rotary_dim / 2] for every row or [batch, rotary_dim / 2], a row each.
RotaryTables rotary_tables(const at::Tensor& inv_freq, const at::Tensor& positions, at::ScalarType dtype,
                           double scale = 1.0);

// x * cos + rotate_half(x) * sin over the first rotary_dim dimensions of x [batch, len, heads, head_dim] (or, with
// `head_major`, [batch, heads, len, head_dim]); the rest pass unchanged. rotate_half(x) * sin is taken as
// roll(x, rotary_dim / 2) * sin_signed: the same products, negated alike, in one op instead of four.
at::Tensor apply_rotary(const at::Tensor& x, const RotaryTables& tables, bool head_major = false);

namespace cpu {
// Whether the fused loop below takes x [b, n1, n2, head_dim] and its tables cos and sin_signed (each broadcast to x
// but for its last dimension, rotary_dim): all on the CPU, in x's dtype, each last dimension dense.
bool can_rotate(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

// apply_rotary's result in one pass over x, bitwise the same, laid out in memory as x is.
at::Tensor apply_rotary(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);
}  // namespace cpu

}  // namespace prefix_scorer
