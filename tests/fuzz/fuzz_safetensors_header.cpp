// The safetensors header: any bytes are a parsed header or a std::runtime_error, and a parsed header's tensors
// lie inside the file.
#include "model/checkpoint/safetensors_header.h"

#include <cstdlib>
#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto header = prefix_scorer::parse_safetensors_header(reinterpret_cast<const char*>(data), size);
    for (const auto& [name, tensor] : header.tensors) {
      if (tensor.begin > tensor.end || header.data_offset + tensor.end > size) std::abort();
    }
  } catch (const std::runtime_error&) {
  }
  return 0;
}
