#pragma once
// Attention of a decode step (a few queries per sequence) over cached keys, as one pass on the CPU.

#include <ATen/ATen.h>

#include <utility>

namespace prefix_scorer::cpu {

// The most queries per sequence attend_decode takes: beyond a decode step's, torch's flash kernel (blocked matmuls)
// is the faster.
constexpr int64_t kMostDecodeQueries = 4;

// The log-sum-exp attend_decode gives a query that sees no key: finite, far below any real one (weight 0 in a merge).
constexpr float kNoKeyLse = -1e30f;

// Whether attend_decode takes these: q, k and v fp32 on the CPU, each last dimension dense, at most
// kMostDecodeQueries queries per sequence, heads a multiple of kv_heads, `visible` a bool CPU mask.
bool can_attend_decode(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& visible);

// q [b, heads, queries, dim] attends to k [b, kv_heads, keys, dim] and v [b, kv_heads, keys, v_dim] where `visible`
// (bool, broadcastable to [b, 1, queries, keys]) allows, scores scaled by `scale`; each kv head serves heads /
// kv_heads query heads. Returns out [b, heads, queries, v_dim] fp32 (token-major memory, as the flash kernel's) and
// lse [b, heads, queries] fp32, the log of each query's softmax sum; a query that sees no key gets out 0 and lse
// kNoKeyLse. Each kv head's keys and values are read once for every query it serves, and invisible keys (a cache's
// unused room) are skipped, where torch's flash kernel reads the keys once per query head and scores every slot.
std::pair<at::Tensor, at::Tensor> attend_decode(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                const at::Tensor& visible, double scale);

}  // namespace prefix_scorer::cpu
