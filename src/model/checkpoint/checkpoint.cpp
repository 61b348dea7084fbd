#include "model/checkpoint/checkpoint.h"

#include "prefix_scorer/errors.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <stdexcept>
#include <sys/stat.h>

namespace prefix_scorer {
namespace {

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

Checkpoint::Checkpoint(const std::string& dir) {
  const std::string single = dir + "/model.safetensors";
  const std::string index = dir + "/model.safetensors.index.json";
  std::vector<std::string> shards;
  if (file_exists(single)) {
    shards.push_back(single);
  } else if (file_exists(index)) {
    nlohmann::json j;
    try {
      std::ifstream in(index);
      j = nlohmann::json::parse(in);
      std::set<std::string> names;
      for (const auto& [tensor, file] : j.at("weight_map").items()) names.insert(file.get<std::string>());
      for (const auto& name : names) shards.push_back(dir + "/" + name);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(fmt::format("malformed '{}': {}", index, e.what()));
    }
  } else {
    throw FileNotFound(fmt::format("'{}' has no model.safetensors nor model.safetensors.index.json", dir));
  }
  for (const auto& path : shards) {
    files_.push_back(std::make_unique<SafetensorsFile>(path));
    for (const auto& [name, info] : files_.back()->tensors()) owner_[name] = files_.back().get();
  }
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> names;
  for (const auto& [name, file] : owner_) names.push_back(name);
  return names;
}

const TensorInfo* Checkpoint::find(const std::string& name) const {
  auto it = owner_.find(name);
  return it == owner_.end() ? nullptr : &it->second->tensors().at(name);
}

at::Tensor Checkpoint::view(const std::string& name) const {
  auto it = owner_.find(name);
  if (it == owner_.end()) throw std::runtime_error(fmt::format("checkpoint has no tensor '{}'", name));
  return it->second->view(name);
}

}  // namespace prefix_scorer
