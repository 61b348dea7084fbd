#pragma once
// How much memory a forward may take by default, from the device it runs on.

#include <c10/core/Device.h>

#include <cstdint>

namespace prefix_scorer {

// A quarter of the free memory of a CUDA device, 1 GiB on the CPU.
int64_t default_batch_bytes(c10::Device device);

namespace cuda {
// Free bytes on a CUDA device as the driver reports them (src/cuda/device_memory.cpp; CUDA builds only).
int64_t free_bytes(c10::Device device);
}  // namespace cuda

}  // namespace prefix_scorer
