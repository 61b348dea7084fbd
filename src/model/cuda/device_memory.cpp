#include "model/device_memory.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>

#include <algorithm>

namespace prefix_scorer::cuda {

int64_t free_bytes(c10::Device device) {
  const c10::cuda::CUDAGuard guard(device);
  size_t free = 0, total = 0;
  C10_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  // What torch's caching allocator holds reserved but unused is free to the next forward, though not to the driver.
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
  const auto aggregate = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
  const int64_t cached = stats.reserved_bytes[aggregate].current - stats.allocated_bytes[aggregate].current;
  return static_cast<int64_t>(free) + std::max<int64_t>(0, cached);
}

}  // namespace prefix_scorer::cuda
