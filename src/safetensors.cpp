#include "safetensors.h"

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

at::ScalarType parse_dtype_tag(const std::string& tag) {
  if (tag == "F32") return at::kFloat;
  if (tag == "F16") return at::kHalf;
  if (tag == "BF16") return at::kBFloat16;
  if (tag == "F64") return at::kDouble;
  if (tag == "I64") return at::kLong;
  if (tag == "I32") return at::kInt;
  if (tag == "I8") return at::kChar;
  if (tag == "U8") return at::kByte;
  if (tag == "BOOL") return at::kBool;
  throw std::runtime_error(fmt::format("unsupported dtype '{}'", tag));
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
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw std::runtime_error(fmt::format("cannot map safetensors file '{}'", path));
  }
  auto fail = [&](const std::string& what) {
    if (map_ != nullptr) ::munmap(map_, size_);
    map_ = nullptr;
    throw std::runtime_error(fmt::format("malformed safetensors file '{}': {}", path, what));
  };
  if (size_ < 8) fail("shorter than its 8-byte header length");
  uint64_t header_len = 0;
  std::memcpy(&header_len, map_, 8);  // little-endian, as the format specifies and x86/ARM hosts are
  if (header_len > size_ - 8) fail(fmt::format("header of {} bytes runs past the end ({} bytes)", header_len, size_));
  data_offset_ = 8 + header_len;

  nlohmann::json header;
  try {
    header = nlohmann::json::parse(static_cast<const char*>(map_) + 8, static_cast<const char*>(map_) + data_offset_);
  } catch (const nlohmann::json::exception& e) {
    fail(fmt::format("header is not valid JSON ({})", e.what()));
  }
  if (!header.is_object()) fail("header is not a JSON object");
  const size_t data_size = size_ - data_offset_;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    try {
      TensorInfo info;
      info.dtype = parse_dtype_tag(entry.at("dtype").get<std::string>());
      info.shape = entry.at("shape").get<std::vector<int64_t>>();
      const auto offsets = entry.at("data_offsets").get<std::vector<size_t>>();
      if (offsets.size() != 2 || offsets[0] > offsets[1]) fail(fmt::format("tensor '{}' has bad data_offsets", name));
      info.begin = offsets[0];
      info.end = offsets[1];
      int64_t numel = 1;
      for (int64_t d : info.shape) numel *= d;
      if (info.end - info.begin != static_cast<size_t>(numel) * c10::elementSize(info.dtype))
        fail(fmt::format("tensor '{}' has {} bytes for its shape", name, info.end - info.begin));
      if (info.end > data_size)
        fail(fmt::format("tensor '{}' ends at byte {} past the data's {} bytes (truncated file?)", name, info.end,
                         data_size));
      tensors_.emplace(name, std::move(info));
    } catch (const nlohmann::json::exception& e) {
      fail(fmt::format("tensor '{}' has a malformed entry ({})", name, e.what()));
    } catch (const std::runtime_error& e) {
      if (map_ == nullptr) throw;
      fail(fmt::format("tensor '{}': {}", name, e.what()));
    }
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (map_ != nullptr) ::munmap(map_, size_);
}

at::Tensor SafetensorsFile::load(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) throw std::runtime_error(fmt::format("'{}' has no tensor '{}'", path_, name));
  const TensorInfo& info = it->second;
  void* data = static_cast<char*>(map_) + data_offset_ + info.begin;
  return at::from_blob(data, info.shape, at::TensorOptions().dtype(info.dtype)).clone();
}

}  // namespace prefix_scorer
