#pragma once
// Rotary position embedding, computed the way Hugging Face transformers computes it (fp32 tables).

#include "prefix_scorer/model_config.h"

#include <ATen/ATen.h>

namespace prefix_scorer {

// Inverse frequencies [head_dim / 2], float32 on the CPU, with the config's frequency scaling applied.
at::Tensor inverse_frequencies(const RopeConfig& rope, int64_t head_dim);

struct RotaryTables {
  at::Tensor cos;  // [batch, 1, len, head_dim] in the model dtype
  at::Tensor sin;
};

// Tables for `positions` [batch, len]; computed on the device of `inv_freq`.
RotaryTables rotary_tables(const at::Tensor& inv_freq, const at::Tensor& positions, at::ScalarType dtype);

// x * cos + rotate_half(x) * sin, for x [batch, heads, len, head_dim].
at::Tensor apply_rotary(const at::Tensor& x, const RotaryTables& tables);

}  // namespace prefix_scorer
