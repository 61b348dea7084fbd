#include "prefix_scorer/attention.h"

#include <torch/version.h>

#include <cmath>
#include <limits>

namespace prefix_scorer {
namespace {

// Folds the query heads that share one kv head into the query axis: [b, kv_heads, group * queries, dim], so
// grouped-query attention needs no copy of k and v. The mask follows: [b, 1, group * queries, keys].
at::Tensor fold_groups(const at::Tensor& q, int64_t kv_heads) {
  const int64_t b = q.size(0), heads = q.size(1), queries = q.size(2), dim = q.size(3);
  return q.reshape({b, kv_heads, heads / kv_heads * queries, dim});
}

at::Tensor fold_mask(const at::Tensor& mask, int64_t group) {
  const int64_t b = mask.size(0), queries = mask.size(2), keys = mask.size(3);
  return mask.unsqueeze(2).expand({b, 1, group, queries, keys}).reshape({b, 1, group * queries, keys});
}

at::Tensor unfold_groups(const at::Tensor& out, int64_t heads) {
  const int64_t b = out.size(0), dim = out.size(3);
  return out.reshape({b, heads, -1, dim});
}

}  // namespace

at::Tensor attention_mask(const at::Tensor& query_positions, const at::Tensor& key_positions,
                          const at::Tensor& key_valid, int64_t sliding_window) {
  const at::Tensor q = query_positions.unsqueeze(2);  // [b, queries, 1]
  const at::Tensor k = key_positions.unsqueeze(1);    // [b, 1, keys]
  at::Tensor mask = (k <= q).logical_and(key_valid.unsqueeze(1));
  if (sliding_window > 0) mask = mask.logical_and(k > q - sliding_window);
  return mask.unsqueeze(1);
}

at::Tensor attend_reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask) {
  const int64_t heads = q.size(1), kv_heads = k.size(1);
  const at::Tensor qf = fold_groups(q, kv_heads);
  const at::Tensor mf = fold_mask(mask.to(q.device()), heads / kv_heads);
  at::Tensor scores = at::matmul(qf, k.transpose(-1, -2)) * (1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  scores = scores.to(at::kFloat).masked_fill(mf.logical_not(), -std::numeric_limits<float>::infinity());
  const at::Tensor probs = at::softmax(scores, -1).to(q.scalar_type());
  return unfold_groups(at::matmul(probs, v), heads);
}

at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask) {
#if TORCH_VERSION_MAJOR >= 2
  const int64_t heads = q.size(1), kv_heads = k.size(1);
  const at::Tensor mf = fold_mask(mask.to(q.device()), heads / kv_heads);
  return unfold_groups(at::scaled_dot_product_attention(fold_groups(q, kv_heads), k, v, mf), heads);
#else
  return attend_reference(q, k, v, mask);
#endif
}

}  // namespace prefix_scorer
