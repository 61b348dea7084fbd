#include "model/device_memory.h"

#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>

namespace prefix_scorer::cuda {

int64_t free_bytes(c10::Device device) {
  const c10::cuda::CUDAGuard guard(device);
  size_t free = 0, total = 0;
  C10_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return static_cast<int64_t>(free);
}

}  // namespace prefix_scorer::cuda
