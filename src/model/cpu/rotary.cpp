// The rotary embedding as one loop on the CPU: apply_rotary's four ATen ops (roll, two products and their sum) and
// their three intermediate tensors become one pass over x. Each product is rounded to x's dtype before the sum, as
// ATen rounds each op's result, so that the outputs are bitwise those of the ops (this file is compiled without
// contracting a * b + c into one fused multiply-add, which would round once).

#include "model/ops/rope.h"

#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <array>

namespace prefix_scorer::cpu {
namespace {

// The stride of `table` along dimension d when broadcast to x's sizes: 0 where it has one element.
std::array<int64_t, 3> broadcast_strides(const at::Tensor& table) {
  std::array<int64_t, 3> strides{};
  for (int64_t d = 0; d < 3; ++d) strides[d] = table.size(d) == 1 ? 0 : table.stride(d);
  return strides;
}

}  // namespace

bool can_rotate(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  if (!x.is_cpu() || x.dim() != 4 || x.stride(3) != 1) return false;
  for (const at::Tensor* t : {&cos, &sin}) {
    if (!t->is_cpu() || t->dim() != 4 || t->scalar_type() != x.scalar_type() || t->stride(3) != 1) return false;
    if (t->size(3) > x.size(3) || t->size(3) % 2 != 0) return false;
    for (int64_t d = 0; d < 3; ++d) {
      if (t->size(d) != 1 && t->size(d) != x.size(d)) return false;
    }
  }
  return cos.size(3) == sin.size(3);
}

at::Tensor apply_rotary(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t rotary = cos.size(3), half = rotary / 2, width = x.size(3);
  // dense, its dimensions in the order of x's strides, as ATen's elementwise ops lay out their results: a head-major
  // view of token-major memory stays so
  at::Tensor out = at::empty_strided(x.sizes(), at::infer_dense_strides(x.sizes(), x.strides()), x.options());
  const std::array<int64_t, 3> cs = broadcast_strides(cos), ss = broadcast_strides(sin);
  const int64_t n1 = x.size(1), n2 = x.size(2), vectors = x.size(0) * n1 * n2;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, x.scalar_type(), "apply_rotary", [&] {
    const scalar_t* xs = x.const_data_ptr<scalar_t>();
    const scalar_t* cp = cos.const_data_ptr<scalar_t>();
    const scalar_t* sp = sin.const_data_ptr<scalar_t>();
    scalar_t* os = out.data_ptr<scalar_t>();
    at::parallel_for(0, vectors, std::max<int64_t>(1, 16384 / width), [&](int64_t begin, int64_t end) {
      for (int64_t v = begin; v < end; ++v) {
        const int64_t i0 = v / (n1 * n2), i1 = v / n2 % n1, i2 = v % n2;
        const scalar_t* in = xs + i0 * x.stride(0) + i1 * x.stride(1) + i2 * x.stride(2);
        const scalar_t* c = cp + i0 * cs[0] + i1 * cs[1] + i2 * cs[2];
        const scalar_t* s = sp + i0 * ss[0] + i1 * ss[1] + i2 * ss[2];
        scalar_t* o = os + i0 * out.stride(0) + i1 * out.stride(1) + i2 * out.stride(2);
        // rotate_half: the second half's values (sin's first half negated) against the first half, and back
        for (int64_t k = 0; k < half; ++k) {
          const scalar_t straight = in[k] * c[k], turned = in[k + half] * s[k];
          o[k] = straight + turned;
        }
        for (int64_t k = half; k < rotary; ++k) {
          const scalar_t straight = in[k] * c[k], turned = in[k - half] * s[k];
          o[k] = straight + turned;
        }
        for (int64_t k = rotary; k < width; ++k) o[k] = in[k];
      }
    });
  });
  return out;
}

}  // namespace prefix_scorer::cpu
