#pragma once
// Read-only access to a .safetensors file through a memory map.

#include <ATen/ATen.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace prefix_scorer {

struct TensorInfo {
  at::ScalarType dtype;
  std::vector<int64_t> shape;
  size_t begin = 0;  // byte offsets into the data section
  size_t end = 0;
};

class SafetensorsFile {
 public:
  // Maps the file and checks its header; throws std::runtime_error naming the file and what is wrong
  // (missing, truncated, malformed header, unsupported dtype, offsets past the end).
  explicit SafetensorsFile(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const std::map<std::string, TensorInfo>& tensors() const { return tensors_; }
  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  // A CPU tensor that owns a copy of the bytes.
  at::Tensor load(const std::string& name) const;
  // A CPU tensor over the mapped bytes, read-only and valid only while this file is open: for a loader that copies
  // it once, to where and in the dtype it is used.
  at::Tensor view(const std::string& name) const;

 private:
  std::string path_;
  void* map_ = nullptr;
  size_t size_ = 0;
  size_t data_offset_ = 0;
  std::map<std::string, TensorInfo> tensors_;
};

}  // namespace prefix_scorer
