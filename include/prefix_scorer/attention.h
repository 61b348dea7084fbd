#pragma once
// Scaled dot-product attention with grouped-query heads and an explicit boolean mask.

#include <ATen/ATen.h>

namespace prefix_scorer {

// [batch, 1, queries, keys] bool: true where a query may attend to a key. A query sees the valid keys at
// positions up to its own (and within `sliding_window` of it when that is positive). All tensors on the CPU.
at::Tensor attention_mask(const at::Tensor& query_positions, const at::Tensor& key_positions,
                          const at::Tensor& key_valid, int64_t sliding_window);

// q [batch, heads, queries, dim], k and v [batch, kv_heads, keys, dim] with heads a multiple of kv_heads;
// returns [batch, heads, queries, dim]. Uses at::scaled_dot_product_attention where torch has it.
at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask);

// The same through matmul and softmax, kept as the reference for the fused path.
at::Tensor attend_reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const at::Tensor& mask);

}  // namespace prefix_scorer
