// cuda::merge_attention on tensors: checks the output type, then launches the kernel of merge_attention.cu.

#include "model/cuda/merge_kernel.h"
#include "model/ops/merge_attention.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include <string>

namespace prefix_scorer::cuda {
namespace {

MergeOutput merge_output(at::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat: return MergeOutput::kFloat;
    case at::kDouble: return MergeOutput::kDouble;
    case at::kHalf: return MergeOutput::kHalf;
    case at::kBFloat16: return MergeOutput::kBFloat16;
    default: TORCH_CHECK(false, "merge_attention: no CUDA kernel writes ", dtype, " outputs");
  }
}

}  // namespace

at::Tensor merge_attention(const at::Tensor& out_a, const at::Tensor& lse_a, const at::Tensor& out_b,
                           const at::Tensor& lse_b, at::ScalarType dtype) {
  const c10::cuda::CUDAGuard guard(out_a.device());
  const MergeOutput type = merge_output(dtype);
  at::Tensor out = at::empty(out_a.sizes(), out_a.options().dtype(dtype));
  if (out_a.numel() == 0) return out;
  const int64_t dim = out_a.size(-1), rows = out_a.numel() / dim;
  launch_merge(out_a.data_ptr<float>(), lse_a.data_ptr<float>(), out_b.data_ptr<float>(), lse_b.data_ptr<float>(),
               out.data_ptr(), type, rows, dim, at::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

std::string compiled_version() {
  const int version = compiled_cuda_version();
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace prefix_scorer::cuda
