#include "model/device_memory.h"

#include <algorithm>
#include <fstream>

namespace prefix_scorer {

int64_t host_memory_bytes(const std::string& field) {
  std::ifstream meminfo("/proc/meminfo");
  std::string name, unit;
  int64_t kib = 0;
  while (meminfo >> name >> kib >> unit) {
    if (name == field + ":") return kib * 1024;
  }
  return 0;
}

int64_t default_batch_bytes(c10::Device device) {
#ifdef PREFIX_SCORER_WITH_CUDA
  if (device.is_cuda()) return cuda::free_bytes(device) / 4;
#endif
  (void)device;
  return std::max(int64_t{1} << 30, host_memory_bytes("MemAvailable") / 4);
}

int64_t default_batch_bytes(const std::vector<c10::Device>& layer_devices) {
  int64_t budget = 0;
  for (const c10::Device device : layer_devices) {
    const auto layers = static_cast<int64_t>(std::count(layer_devices.begin(), layer_devices.end(), device));
    const int64_t scaled = default_batch_bytes(device) * static_cast<int64_t>(layer_devices.size()) / layers;
    budget = budget == 0 ? scaled : std::min(budget, scaled);
  }
  return budget;
}

}  // namespace prefix_scorer
