#pragma once
// The log-sum-exp merge of two partial attentions over disjoint key sets (cascade attention's last step).

#include <ATen/ATen.h>

#include <string>

namespace prefix_scorer {

// Each part: out [..., dim] fp32, normalised over its own keys, and lse [..., 1] fp32, the log of its softmax
// sum. Returns the attention over both key sets, cast to `dtype`. A fused kernel on CUDA where built with CUDA,
// else merge_attention_reference.
at::Tensor merge_attention(const at::Tensor& out_a, const at::Tensor& lse_a, const at::Tensor& out_b,
                           const at::Tensor& lse_b, at::ScalarType dtype);

// The same in ATen operations, on any device.
at::Tensor merge_attention_reference(const at::Tensor& out_a, const at::Tensor& lse_a, const at::Tensor& out_b,
                                     const at::Tensor& lse_b, at::ScalarType dtype);

// The same with each lse of out's shape less its last dimension, as attention kernels return it: CUDA's fused
// kernel on CUDA, else one sigmoid and one lerp (the fewest ops a merge takes).
at::Tensor merge_attention_rows(const at::Tensor& out_a, const at::Tensor& lse_a, const at::Tensor& out_b,
                                const at::Tensor& lse_b, at::ScalarType dtype);

namespace cuda {
// The fused kernel: all four inputs contiguous fp32 on one CUDA device.
at::Tensor merge_attention(const at::Tensor& out_a, const at::Tensor& lse_a, const at::Tensor& out_b,
                           const at::Tensor& lse_b, at::ScalarType dtype);

// The CUDA version this library's kernels were compiled with ("13.0").
std::string compiled_version();
}  // namespace cuda

}  // namespace prefix_scorer
