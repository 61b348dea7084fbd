#pragma once
// Device and dtype names as users write them, and the placement of layers on devices.

#include <ATen/ATen.h>

#include <string>
#include <vector>

namespace prefix_scorer {

// "cpu", "cuda", "cuda:1"; throws std::invalid_argument for a malformed name or a device this machine lacks.
c10::Device parse_device(const std::string& name);

// "float32"/"fp32"/"float", "bfloat16"/"bf16", "float16"/"fp16"/"half"; throws std::invalid_argument otherwise.
at::ScalarType parse_dtype(const std::string& name);

// The bytes of a model's weights as they fall on devices: each layer's, and what the first device holds besides
// its layers (the embeddings) and the last (the final norm and the output layer).
struct WeightBytes {
  std::vector<int64_t> layers;
  int64_t first = 0, last = 0;
};

// The device of each layer: the layers split into as many contiguous blocks as `devices` has entries, in order, so
// that the device holding the most bytes holds as few as can be (as accelerate's balanced "auto" map aims to); of
// equally good splits, the one with the earliest blocks largest. Equal layers and no extras give near-equal
// blocks ({cuda:0, cpu} puts the first half on cuda:0 and the rest on the CPU). Throws std::invalid_argument for
// more devices than layers.
std::vector<c10::Device> place_layers(const std::vector<c10::Device>& devices, const WeightBytes& bytes);

}  // namespace prefix_scorer
