// Fused log-sum-exp merge of two partial attentions: one pass over the outputs instead of six ATen kernels.
// merge_attention_reference (src/model/ops/merge_attention.cpp) is its CPU reference.

#include "model/ops/merge_attention.h"

#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include <cuda.h>

#include <string>

namespace prefix_scorer::cuda {
namespace {

template <typename scalar_t>
__global__ void merge_kernel(const float* out_a, const float* lse_a, const float* out_b, const float* lse_b,
                             scalar_t* out, int64_t rows, int64_t dim) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * dim) return;
  const int64_t row = i / dim;
  const float a = lse_a[row], b = lse_b[row], m = fmaxf(a, b);
  const float wa = __expf(a - m), wb = __expf(b - m);
  out[i] = static_cast<scalar_t>((out_a[i] * wa + out_b[i] * wb) / (wa + wb));
}

}  // namespace

at::Tensor merge_attention(const at::Tensor& out_a, const at::Tensor& lse_a, const at::Tensor& out_b,
                           const at::Tensor& lse_b, at::ScalarType dtype) {
  const c10::cuda::CUDAGuard guard(out_a.device());
  at::Tensor out = at::empty(out_a.sizes(), out_a.options().dtype(dtype));
  const int64_t dim = out_a.size(-1), rows = out_a.numel() / dim, threads = 256;
  if (out_a.numel() == 0) return out;
  const int64_t blocks = (rows * dim + threads - 1) / threads;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "merge_attention", [&] {
    merge_kernel<scalar_t><<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        out_a.data_ptr<float>(), lse_a.data_ptr<float>(), out_b.data_ptr<float>(), lse_b.data_ptr<float>(),
        out.data_ptr<scalar_t>(), rows, dim);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

std::string compiled_version() {
  return std::to_string(CUDA_VERSION / 1000) + "." + std::to_string(CUDA_VERSION % 1000 / 10);
}

}  // namespace prefix_scorer::cuda
