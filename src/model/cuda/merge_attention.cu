// Fused log-sum-exp merge of two partial attentions: one pass over the outputs instead of six ATen kernels.
// merge_attention_reference (src/model/ops/merge_attention.cpp) is its CPU reference.

#include "model/cuda/merge_kernel.h"

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace prefix_scorer::cuda {
namespace {

// Each output rounded to nearest even from fp32, as ATen's Half and BFloat16 round on the device.
template <typename T>
__device__ T from_float(float value) { return static_cast<T>(value); }
template <>
__device__ __half from_float<__half>(float value) { return __float2half_rn(value); }
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float value) { return __float2bfloat16_rn(value); }

template <typename T>
__global__ void merge_kernel(const float* out_a, const float* lse_a, const float* out_b, const float* lse_b, T* out,
                             int64_t rows, int64_t dim) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * dim) return;
  const int64_t row = i / dim;
  const float a = lse_a[row], b = lse_b[row], m = fmaxf(a, b);
  const float wa = __expf(a - m), wb = __expf(b - m);
  out[i] = from_float<T>((out_a[i] * wa + out_b[i] * wb) / (wa + wb));
}

template <typename T>
void launch(const float* out_a, const float* lse_a, const float* out_b, const float* lse_b, void* out, int64_t rows,
            int64_t dim, cudaStream_t stream) {
  constexpr int64_t threads = 256;
  const int64_t blocks = (rows * dim + threads - 1) / threads;
  merge_kernel<T><<<blocks, threads, 0, stream>>>(out_a, lse_a, out_b, lse_b, static_cast<T*>(out), rows, dim);
}

}  // namespace

void launch_merge(const float* out_a, const float* lse_a, const float* out_b, const float* lse_b, void* out,
                  MergeOutput type, int64_t rows, int64_t dim, cudaStream_t stream) {
  switch (type) {
    case MergeOutput::kFloat: return launch<float>(out_a, lse_a, out_b, lse_b, out, rows, dim, stream);
    case MergeOutput::kDouble: return launch<double>(out_a, lse_a, out_b, lse_b, out, rows, dim, stream);
    case MergeOutput::kHalf: return launch<__half>(out_a, lse_a, out_b, lse_b, out, rows, dim, stream);
    case MergeOutput::kBFloat16: return launch<__nv_bfloat16>(out_a, lse_a, out_b, lse_b, out, rows, dim, stream);
  }
}

int compiled_cuda_version() { return CUDA_VERSION; }

}  // namespace prefix_scorer::cuda
