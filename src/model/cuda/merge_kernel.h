#pragma once
// The fused merge kernel's launch on plain pointers, so that its .cu includes CUDA's headers only (nvcc compiling
// ATen's headers twice per architecture cost minutes of every build). merge_attention.cpp wraps it for tensors.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace prefix_scorer::cuda {

enum class MergeOutput { kFloat, kDouble, kHalf, kBFloat16 };

// out[i] = (out_a[i] * e^lse_a[row] + out_b[i] * e^lse_b[row]) / (e^lse_a[row] + e^lse_b[row]), row = i / dim,
// for rows * dim contiguous fp32 values, written as `type` into `out`; launched on `stream`, errors left to the caller.
void launch_merge(const float* out_a, const float* lse_a, const float* out_b, const float* lse_b, void* out,
                  MergeOutput type, int64_t rows, int64_t dim, cudaStream_t stream);

// CUDA_VERSION as "13.0": the toolkit the kernels were compiled with.
int compiled_cuda_version();

}  // namespace prefix_scorer::cuda
