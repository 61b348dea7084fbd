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

// The same with each lse of out's shape less its last dimension, as attention kernels return it ([rows, heads,
// queries, dim] and [rows, heads, queries]), where part a may be laid out by slots: row r's in slot
// slot_of_row[r] (undefined: slot r). A fused loop on the CPU, CUDA's fused kernel on CUDA, else ATen's ops.
at::Tensor merge_attention_rows(const at::Tensor& out_a, const at::Tensor& lse_a, const at::Tensor& out_b,
                                const at::Tensor& lse_b, at::ScalarType dtype, const at::Tensor& slot_of_row = {});

namespace cpu {
// Whether the fused loop below takes the parts' outputs: 4-D fp32 on the CPU, of one shape but for their rows, each
// last dimension dense.
bool can_merge(const at::Tensor& out_a, const at::Tensor& out_b);

// merge_attention_rows in one pass: parts fp32 on the CPU, each out's last dimension dense, slot_of_row (if any)
// int64 on the CPU. The output runs token-major in memory ([rows, queries, heads, dim]), as attention kernels'.
at::Tensor merge_attention_rows(const at::Tensor& out_a, const at::Tensor& lse_a, const at::Tensor& out_b,
                                const at::Tensor& lse_b, at::ScalarType dtype, const at::Tensor& slot_of_row);
}  // namespace cpu

namespace cuda {
// The fused kernel: all four inputs contiguous fp32 on one CUDA device.
at::Tensor merge_attention(const at::Tensor& out_a, const at::Tensor& lse_a, const at::Tensor& out_b,
                           const at::Tensor& lse_b, at::ScalarType dtype);

// The CUDA version this library's kernels were compiled with ("13.0").
std::string compiled_version();
}  // namespace cuda

}  // namespace prefix_scorer
