#pragma once
// How much memory a forward may take by default, from the device it runs on.

#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <vector>

namespace prefix_scorer {

// A field of /proc/meminfo ("MemAvailable": what the kernel could hand out without swapping), in bytes; 0 where it
// is missing.
int64_t host_memory_bytes(const std::string& field);

// A quarter of the free memory of a CUDA device; on the CPU a quarter of the memory available now, at least 1 GiB.
int64_t default_batch_bytes(c10::Device device);

// The budget for forwards whose layers sit on `layer_devices` (one per layer): each device's default_batch_bytes,
// scaled up by the share of the layers (and so of their keys and values) it does not hold; the smallest of them.
int64_t default_batch_bytes(const std::vector<c10::Device>& layer_devices);

namespace cuda {
// Free bytes on a CUDA device as the driver reports them (src/cuda/device_memory.cpp; CUDA builds only).
int64_t free_bytes(c10::Device device);
}  // namespace cuda

}  // namespace prefix_scorer
