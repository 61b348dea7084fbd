#pragma once
// Every copy between the host and a device goes through one of these, so that what a forward moves is counted
// (the stats report it; tests hold it constant in the number of layers). On CUDA a host-to-device copy is from
// pinned memory and does not block the host; a device-to-host copy waits for the device, so it is counted as a sync.

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace prefix_scorer {

struct TransferCounts {
  int64_t copies = 0;  // host-to-device copies
  int64_t syncs = 0;   // device-to-host copies, each waiting for the device
  int64_t bytes_to_device = 0, bytes_to_host = 0;  // what those copies moved
};

// This thread's counts so far.
TransferCounts& thread_transfers();

// `host`, a CPU tensor, on `device`: one copy, counted on the CPU too so that counts do not depend on the device.
at::Tensor upload(const at::Tensor& host, c10::Device device);

// `host` on `device`, kept in `held` between calls: a loop over layers that walk their devices copies it once per
// device, not once per layer.
const at::Tensor& upload_once(const at::Tensor& host, c10::Device device, at::Tensor& held);

// CPU tensors of one dtype on `device` through a single copy (views of one buffer, shapes kept); undefined ones
// stay undefined.
std::vector<at::Tensor> upload_together(const std::vector<at::Tensor>& host, c10::Device device);

// `t` on the host: one sync.
at::Tensor download(const at::Tensor& t);

}  // namespace prefix_scorer
