#include "prefix_scorer/devices.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace prefix_scorer {

c10::Device parse_device(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower != "cpu" && lower.rfind("cuda", 0) != 0)
    throw std::invalid_argument(fmt::format("unknown device '{}' (expected cpu, cuda or cuda:N)", name));
  c10::Device device = c10::kCPU;
  try {
    device = c10::Device(lower);
  } catch (const c10::Error&) {
    throw std::invalid_argument(fmt::format("malformed device name '{}' (expected cpu, cuda or cuda:N)", name));
  }
  if (device.is_cuda()) {
    if (!at::hasCUDA())
      throw std::invalid_argument(fmt::format("device '{}' is not available: this build or machine has no CUDA", name));
    const int64_t count = at::detail::getCUDAHooks().getNumGPUs();
    if (device.has_index() && device.index() >= count)
      throw std::invalid_argument(fmt::format("device '{}' does not exist: this machine has {} CUDA device(s)", name,
                                              count));
    // "cuda" means the current device, as torch reads it; resolved here so that every tensor names its GPU
    // instead of landing on whichever device the thread has current when it is made.
    if (!device.has_index()) device = c10::Device(c10::kCUDA, at::detail::getCUDAHooks().current_device());
  }
  return device;
}

at::ScalarType parse_dtype(const std::string& name) {
  if (name == "float32" || name == "fp32" || name == "float") return at::kFloat;
  if (name == "bfloat16" || name == "bf16") return at::kBFloat16;
  if (name == "float16" || name == "fp16" || name == "half") return at::kHalf;
  throw std::invalid_argument(fmt::format("unknown dtype '{}' (expected float32, bfloat16 or float16)", name));
}

std::vector<c10::Device> place_layers(const std::vector<c10::Device>& devices, int64_t num_layers) {
  if (devices.empty()) throw std::invalid_argument("the layer device list is empty");
  const auto blocks = static_cast<int64_t>(devices.size());
  if (blocks > num_layers)
    throw std::invalid_argument(
        fmt::format("{} layer devices given for a model of {} layers", blocks, num_layers));
  std::vector<c10::Device> placement;
  placement.reserve(num_layers);
  for (int64_t layer = 0; layer < num_layers; ++layer) placement.push_back(devices[layer * blocks / num_layers]);
  return placement;
}

}  // namespace prefix_scorer
