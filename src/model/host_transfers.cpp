#include "model/host_transfers.h"

#include <algorithm>
#include <stdexcept>

namespace prefix_scorer {

TransferCounts& thread_transfers() {
  thread_local TransferCounts counts;
  return counts;
}

at::Tensor upload(const at::Tensor& host, c10::Device device) {
  if (!host.device().is_cpu()) throw std::invalid_argument("upload: the tensor is not on the host");
  ++thread_transfers().copies;
  thread_transfers().bytes_to_device += static_cast<int64_t>(host.nbytes());
  if (device.is_cpu()) return host;
  return host.pin_memory().to(device, /*non_blocking=*/true);
}

const at::Tensor& upload_once(const at::Tensor& host, c10::Device device, at::Tensor& held) {
  if (!held.defined() || held.device() != device) held = upload(host, device);
  return held;
}

std::vector<at::Tensor> upload_together(const std::vector<at::Tensor>& host, c10::Device device) {
  if (device.is_cpu()) {  // counted as the one copy it is elsewhere, and handed back as they are
    int64_t bytes = 0;
    for (const at::Tensor& t : host) bytes += t.defined() ? static_cast<int64_t>(t.nbytes()) : 0;
    if (bytes == 0 && std::none_of(host.begin(), host.end(), [](const at::Tensor& t) { return t.defined(); })) return host;
    ++thread_transfers().copies;
    thread_transfers().bytes_to_device += bytes;
    return host;
  }
  std::vector<at::Tensor> flat;
  for (const at::Tensor& t : host) {
    if (t.defined()) flat.push_back(t.reshape({-1}));
  }
  std::vector<at::Tensor> out(host.size());
  if (flat.empty()) return out;
  const at::Tensor buffer = upload(flat.size() == 1 ? flat[0].contiguous() : at::cat(flat), device);
  int64_t offset = 0;
  for (size_t i = 0; i < host.size(); ++i) {
    if (!host[i].defined()) continue;
    out[i] = buffer.narrow(0, offset, host[i].numel()).view(host[i].sizes());
    offset += host[i].numel();
  }
  return out;
}

at::Tensor download(const at::Tensor& t) {
  ++thread_transfers().syncs;
  thread_transfers().bytes_to_host += static_cast<int64_t>(t.nbytes());
  return t.to(at::kCPU);
}

}  // namespace prefix_scorer
