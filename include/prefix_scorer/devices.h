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

// The device of each layer: the layers split into as many contiguous, near-equal blocks as `devices` has
// entries, in order ({cuda:0, cpu} puts the first half on cuda:0 and the rest on the CPU).
std::vector<c10::Device> place_layers(const std::vector<c10::Device>& devices, int64_t num_layers);

}  // namespace prefix_scorer
