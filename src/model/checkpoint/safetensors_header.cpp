#include "model/checkpoint/safetensors_header.h"

#include "json_integer.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <limits>
#include <stdexcept>

namespace prefix_scorer {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

// The number of bytes `shape` holds at `element_size` each, or a failure naming the tensor when a dimension is
// negative or the product overflows.
size_t shape_bytes(const std::string& name, const std::vector<int64_t>& shape, size_t element_size) {
  size_t bytes = element_size;
  for (int64_t d : shape) {
    if (d < 0) fail(fmt::format("tensor '{}' has a negative dimension {}", name, d));
    if (d != 0 && bytes > std::numeric_limits<size_t>::max() / static_cast<size_t>(d))
      fail(fmt::format("tensor '{}' has a shape too large to address", name));
    bytes *= static_cast<size_t>(d);
  }
  return bytes;
}

// The integers of the array `entry[key]` (shape, data_offsets); a float that is no integer or one out of range
// fails naming the tensor, never converts silently.
std::vector<int64_t> integers(const std::string& name, const nlohmann::json& entry, const char* key) {
  const nlohmann::json& list = entry.at(key);
  if (!list.is_array()) fail(fmt::format("tensor '{}' has a {} that is not a list", name, key));
  std::vector<int64_t> values;
  for (const nlohmann::json& value : list) {
    try {
      values.push_back(json_integer(value, fmt::format("tensor '{}': {}", name, key)));
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
  }
  return values;
}

TensorEntry parse_entry(const std::string& name, const nlohmann::json& entry, size_t data_size) {
  if (!entry.is_object()) fail(fmt::format("tensor '{}' is not a JSON object", name));
  TensorEntry info;
  try {
    info.dtype = entry.at("dtype").get<std::string>();
    info.shape = integers(name, entry, "shape");
    const std::vector<int64_t> offsets = integers(name, entry, "data_offsets");
    if (offsets.size() != 2 || offsets[0] < 0 || offsets[0] > offsets[1])
      fail(fmt::format("tensor '{}' has bad data_offsets", name));
    info.begin = static_cast<uint64_t>(offsets[0]);
    info.end = static_cast<uint64_t>(offsets[1]);
  } catch (const nlohmann::json::exception& e) {
    fail(fmt::format("tensor '{}' has a malformed entry ({})", name, e.what()));
  }
  const size_t element_size = [&] {
    try {
      return dtype_tag_size(info.dtype);
    } catch (const std::runtime_error& e) {
      fail(fmt::format("tensor '{}': {}", name, e.what()));
    }
  }();
  const size_t bytes = shape_bytes(name, info.shape, element_size);
  if (info.end - info.begin != bytes)
    fail(fmt::format("tensor '{}' has {} bytes for its shape's {}", name, info.end - info.begin, bytes));
  if (info.end > data_size)
    fail(fmt::format("tensor '{}' ends at byte {} past the data's {} bytes (truncated file?)", name, info.end,
                     data_size));
  return info;
}

}  // namespace

size_t dtype_tag_size(const std::string& tag) {
  if (tag == "F64" || tag == "I64") return 8;
  if (tag == "F32" || tag == "I32" || tag == "U32") return 4;
  if (tag == "F16" || tag == "BF16" || tag == "U16") return 2;
  if (tag == "I8" || tag == "U8" || tag == "BOOL" || tag == "F8_E4M3" || tag == "F8_E5M2" || tag == "F8_E8M0") return 1;
  fail(fmt::format("unsupported dtype '{}'", tag));
}

SafetensorsHeader parse_safetensors_header(const char* bytes, size_t size) {
  if (size < 8) fail("shorter than its 8-byte header length");
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes, 8);  // little-endian, as the format specifies and x86/ARM hosts are
  if (header_len > size - 8) fail(fmt::format("header of {} bytes runs past the end ({} bytes)", header_len, size));
  SafetensorsHeader header;
  header.data_offset = 8 + header_len;

  nlohmann::json json;
  try {
    json = nlohmann::json::parse(bytes + 8, bytes + header.data_offset);
  } catch (const nlohmann::json::exception& e) {
    fail(fmt::format("header is not valid JSON ({})", e.what()));
  }
  if (!json.is_object()) fail("header is not a JSON object");
  const size_t data_size = size - header.data_offset;
  for (const auto& [name, entry] : json.items()) {
    if (name != "__metadata__") header.tensors.emplace(name, parse_entry(name, entry, data_size));
  }
  return header;
}

}  // namespace prefix_scorer
