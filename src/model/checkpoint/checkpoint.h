#pragma once
// A Hugging Face checkpoint directory: model.safetensors, or shards listed by model.safetensors.index.json.

#include "model/checkpoint/safetensors.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace prefix_scorer {

class Checkpoint {
 public:
  // Throws std::runtime_error when the directory holds neither file, or a shard is missing or malformed.
  explicit Checkpoint(const std::string& dir);

  // nullptr when the checkpoint has no tensor of that name.
  const TensorInfo* find(const std::string& name) const;
  // Every tensor's name, sorted.
  std::vector<std::string> names() const;
  // The tensor over its file's mapped bytes, valid only while the checkpoint lives (see SafetensorsFile::view).
  at::Tensor view(const std::string& name) const;

 private:
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const SafetensorsFile*> owner_;
};

}  // namespace prefix_scorer
