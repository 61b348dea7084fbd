#include "model/checkpoint/safetensors.h"
#include "model/checkpoint/safetensors_header.h"

#include "prefix_scorer/errors.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace prefix_scorer {
namespace {

at::ScalarType scalar_type(const std::string& tag) {
  if (tag == "F32") return at::kFloat;
  if (tag == "F16") return at::kHalf;
  if (tag == "BF16") return at::kBFloat16;
  if (tag == "F64") return at::kDouble;
  if (tag == "I64") return at::kLong;
  if (tag == "I32") return at::kInt;
  if (tag == "I8") return at::kChar;
  if (tag == "U8") return at::kByte;
  if (tag == "F8_E4M3") return at::kFloat8_e4m3fn;
  if (tag == "F8_E5M2") return at::kFloat8_e5m2;
  if (tag == "F8_E8M0") return at::kFloat8_e8m0fnu;  // power-of-two scales (MX formats)
  if (tag == "U16") return at::kUInt16;
  if (tag == "U32") return at::kUInt32;
  if (tag == "BOOL") return at::kBool;
  throw std::logic_error(fmt::format("dtype '{}' passed the header check but has no torch type", tag));
}

}  // namespace

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw FileNotFound(fmt::format("cannot open safetensors file '{}': {}", path, strerror(errno)));
  struct stat st {};
  ::fstat(fd, &st);
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) {  // (a 0-byte file maps nothing and fails the header check)
    map_ = nullptr;
    throw std::runtime_error(fmt::format("cannot map safetensors file '{}'", path));
  }
  SafetensorsHeader header;
  try {
    header = parse_safetensors_header(static_cast<const char*>(map_), size_);
  } catch (const std::runtime_error& e) {
    if (map_ != nullptr) ::munmap(map_, size_);
    map_ = nullptr;
    throw std::runtime_error(fmt::format("malformed safetensors file '{}': {}", path, e.what()));
  }
  data_offset_ = header.data_offset;
  for (auto& [name, entry] : header.tensors)
    tensors_.emplace(name, TensorInfo{scalar_type(entry.dtype), std::move(entry.shape), entry.begin, entry.end});
}

SafetensorsFile::~SafetensorsFile() {
  if (map_ != nullptr) ::munmap(map_, size_);
}

at::Tensor SafetensorsFile::load(const std::string& name) const { return view(name).clone(); }

at::Tensor SafetensorsFile::view(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) throw std::runtime_error(fmt::format("'{}' has no tensor '{}'", path_, name));
  const TensorInfo& info = it->second;
  void* data = static_cast<char*>(map_) + data_offset_ + info.begin;
  return at::from_blob(data, info.shape, at::TensorOptions().dtype(info.dtype));
}

}  // namespace prefix_scorer
