#include "prefix_scorer/devices.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
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

std::vector<c10::Device> place_layers(const std::vector<c10::Device>& devices, const WeightBytes& bytes) {
  if (devices.empty()) throw std::invalid_argument("the layer device list is empty");
  const auto blocks = static_cast<int64_t>(devices.size());
  const auto layers = static_cast<int64_t>(bytes.layers.size());
  if (blocks > layers)
    throw std::invalid_argument(fmt::format("{} layer devices given for a model of {} layers", blocks, layers));
  std::vector<int64_t> before(layers + 1, 0);  // bytes of layers [0, i)
  for (int64_t i = 0; i < layers; ++i) before[i + 1] = before[i] + bytes.layers[i];
  auto block_bytes = [&](int64_t block, int64_t begin, int64_t end) {
    return before[end] - before[begin] + (block == 0 ? bytes.first : 0) + (block == blocks - 1 ? bytes.last : 0);
  };
  // heaviest[j][i]: the least possible bytes on the heaviest of blocks 0..j when they hold layers [0, i);
  // start[j][i]: where block j then begins (the latest such start: earlier blocks largest).
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  std::vector<std::vector<int64_t>> heaviest(blocks, std::vector<int64_t>(layers + 1, kNone));
  std::vector<std::vector<int64_t>> start(blocks, std::vector<int64_t>(layers + 1, 0));
  for (int64_t i = 1; i <= layers; ++i) heaviest[0][i] = block_bytes(0, 0, i);
  for (int64_t j = 1; j < blocks; ++j)
    for (int64_t i = j + 1; i <= layers; ++i)
      for (int64_t s = j; s < i; ++s) {
        const int64_t worst = std::max(heaviest[j - 1][s], block_bytes(j, s, i));
        if (worst <= heaviest[j][i]) heaviest[j][i] = worst, start[j][i] = s;
      }
  std::vector<c10::Device> placement(layers, devices.front());
  for (int64_t j = blocks - 1, end = layers; j > 0; end = start[j][end], --j)
    std::fill(placement.begin() + start[j][end], placement.begin() + end, devices[j]);
  return placement;
}

}  // namespace prefix_scorer
