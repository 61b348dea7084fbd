// The log-sum-exp merge of two partial attentions as one loop on the CPU: ATen's sub, sigmoid, unsqueeze and lerp
// (and, where a part is laid out by slots, its two reorderings) become one pass over the outputs.

#include "model/ops/merge_attention.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>

namespace prefix_scorer::cpu {

bool can_merge(const at::Tensor& out_a, const at::Tensor& out_b) {
  return out_a.is_cpu() && out_a.dim() == 4 && out_b.dim() == 4 && out_a.sizes().slice(1) == out_b.sizes().slice(1) &&
         out_a.stride(3) == 1 && out_b.stride(3) == 1 && out_a.scalar_type() == at::kFloat &&
         out_b.scalar_type() == at::kFloat;
}

at::Tensor merge_attention_rows(const at::Tensor& out_a, const at::Tensor& lse_a, const at::Tensor& out_b,
                                const at::Tensor& lse_b, at::ScalarType dtype, const at::Tensor& slot_of_row) {
  const int64_t rows = out_b.size(0), heads = out_b.size(1), queries = out_b.size(2), dim = out_b.size(3);
  // [rows, heads, queries, dim] over token-major memory, as the attention kernels leave their outputs
  at::Tensor out = at::empty_strided({rows, heads, queries, dim}, {queries * heads * dim, dim, heads * dim, 1},
                                     out_b.options().dtype(dtype));
  const int64_t* slot = slot_of_row.defined() ? slot_of_row.const_data_ptr<int64_t>() : nullptr;
  const float* oa = out_a.const_data_ptr<float>();
  const float* la = lse_a.const_data_ptr<float>();
  const float* ob = out_b.const_data_ptr<float>();
  const float* lb = lse_b.const_data_ptr<float>();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, dtype, "merge_attention_rows", [&] {
    scalar_t* merged = out.data_ptr<scalar_t>();
    at::parallel_for(0, rows * heads * queries, std::max<int64_t>(1, 16384 / dim), [&](int64_t begin, int64_t end) {
      for (int64_t v = begin; v < end; ++v) {
        const int64_t r = v / (heads * queries), h = v / queries % heads, q = v % queries;
        const int64_t s = slot == nullptr ? r : slot[r];
        const float* a = oa + s * out_a.stride(0) + h * out_a.stride(1) + q * out_a.stride(2);
        const float* b = ob + r * out_b.stride(0) + h * out_b.stride(1) + q * out_b.stride(2);
        scalar_t* o = merged + r * out.stride(0) + h * out.stride(1) + q * out.stride(2);
        const float la_v = la[s * lse_a.stride(0) + h * lse_a.stride(1) + q * lse_a.stride(2)];
        const float lb_v = lb[r * lse_b.stride(0) + h * lse_b.stride(1) + q * lse_b.stride(2)];
        // a's weight: sigmoid(lse_a - lse_b); then lerp from b towards a, in torch's two forms
        const float w = 1.0f / (1.0f + std::exp(lb_v - la_v));
        if (std::abs(w) < 0.5f) {
          for (int64_t k = 0; k < dim; ++k) o[k] = static_cast<scalar_t>(b[k] + w * (a[k] - b[k]));
        } else {
          for (int64_t k = 0; k < dim; ++k) o[k] = static_cast<scalar_t>(a[k] - (a[k] - b[k]) * (1.0f - w));
        }
      }
    });
  });
  return out;
}

}  // namespace prefix_scorer::cpu
