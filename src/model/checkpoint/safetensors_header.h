#pragma once
// The header of a .safetensors file, parsed and checked without libtorch (so that it can be fuzzed and run under
// sanitizers on its own).

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace prefix_scorer {

struct TensorEntry {
  std::string dtype;  // the file's tag: F32, F16, BF16, F64, I64, I32, U32, U16, I8, U8, BOOL, F8_E4M3, F8_E5M2, F8_E8M0
  std::vector<int64_t> shape;
  size_t begin = 0;  // byte offsets into the data section
  size_t end = 0;
};

struct SafetensorsHeader {
  size_t data_offset = 0;  // where the data section starts in the file
  std::map<std::string, TensorEntry> tensors;
};

// Bytes per element of a dtype tag; throws std::runtime_error for a tag it does not know.
size_t dtype_tag_size(const std::string& tag);

// Parses the first `size` bytes of a file (all of it): the 8-byte header length, the JSON header, and each
// tensor's dtype, shape and offsets against the data that follows. Throws std::runtime_error saying what is wrong
// (truncated, malformed JSON, unsupported dtype, a size that does not match the shape, offsets past the end).
SafetensorsHeader parse_safetensors_header(const char* bytes, size_t size);

}  // namespace prefix_scorer
