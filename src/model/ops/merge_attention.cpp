#include "model/ops/merge_attention.h"

#include "model/ops/cast.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

namespace prefix_scorer {
namespace {

void check_parts(const at::Tensor& out_a, const at::Tensor& lse_a, const at::Tensor& out_b, const at::Tensor& lse_b) {
  const auto lse_shape = [&] {
    auto sizes = out_a.sizes().vec();
    sizes.back() = 1;
    return sizes;
  }();
  if (out_b.sizes() != out_a.sizes() || lse_a.sizes().vec() != lse_shape || lse_b.sizes().vec() != lse_shape)
    throw std::invalid_argument(fmt::format("merge_attention: parts of shapes out {} / {}, lse {} / {} do not match",
                                            out_a.sizes(), out_b.sizes(), lse_a.sizes(), lse_b.sizes()));
  for (const at::Tensor* t : {&out_a, &lse_a, &out_b, &lse_b}) {
    if (t->scalar_type() != at::kFloat || t->device() != out_a.device())
      throw std::invalid_argument("merge_attention: every part must be float32 on one device");
  }
}

// a's weight exp(lse_a - logaddexp(lse_a, lse_b)) is sigmoid(lse_a - lse_b); b's is one less it. `a_weight` holds it,
// shaped to broadcast over the outputs.
at::Tensor merge_by_weight(const at::Tensor& out_a, const at::Tensor& out_b, const at::Tensor& a_weight,
                           at::ScalarType dtype) {
  return cast(at::lerp(out_b, out_a, a_weight), dtype);
}

}  // namespace

at::Tensor merge_attention_reference(const at::Tensor& out_a, const at::Tensor& lse_a, const at::Tensor& out_b,
                                     const at::Tensor& lse_b, at::ScalarType dtype) {
  return merge_by_weight(out_a, out_b, at::sigmoid(lse_a - lse_b), dtype);
}

at::Tensor merge_attention_rows(const at::Tensor& out_a, const at::Tensor& lse_a, const at::Tensor& out_b,
                                const at::Tensor& lse_b, at::ScalarType dtype, const at::Tensor& slot_of_row) {
  if (cpu::can_merge(out_a, out_b)) return cpu::merge_attention_rows(out_a, lse_a, out_b, lse_b, dtype, slot_of_row);
  const at::Tensor a = slot_of_row.defined() ? out_a.index_select(0, slot_of_row) : out_a;
  const at::Tensor a_lse = slot_of_row.defined() ? lse_a.index_select(0, slot_of_row) : lse_a;
#ifdef PREFIX_SCORER_WITH_CUDA
  if (a.is_cuda()) return merge_attention(a, a_lse.unsqueeze(-1), out_b, lse_b.unsqueeze(-1), dtype);
#endif
  return merge_by_weight(a, out_b, at::sigmoid(a_lse - lse_b).unsqueeze(-1), dtype);
}

at::Tensor merge_attention(const at::Tensor& out_a, const at::Tensor& lse_a, const at::Tensor& out_b,
                           const at::Tensor& lse_b, at::ScalarType dtype) {
  check_parts(out_a, lse_a, out_b, lse_b);
#ifdef PREFIX_SCORER_WITH_CUDA
  if (out_a.is_cuda())
    return cuda::merge_attention(out_a.contiguous(), lse_a.contiguous(), out_b.contiguous(), lse_b.contiguous(), dtype);
#endif
  return merge_attention_reference(out_a, lse_a, out_b, lse_b, dtype);
}

}  // namespace prefix_scorer
