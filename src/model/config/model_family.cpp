#include "model/config/model_family.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <utility>

namespace prefix_scorer {

const char* multimodal_text_type(const std::string& model_type) {
  for (const ModelFamily& f : registered_families())
    if (f.multimodal_wrapper != nullptr && model_type == f.multimodal_wrapper) return f.model_type;
  return nullptr;
}

std::vector<std::string> supported_model_types() {
  std::vector<std::string> types;
  for (const ModelFamily& f : registered_families()) types.emplace_back(f.model_type);
  for (const ModelFamily& f : registered_families())
    if (f.multimodal_wrapper != nullptr) types.emplace_back(f.multimodal_wrapper);
  return types;
}

const ModelFamily& model_family(const std::string& model_type) {
  for (const ModelFamily& f : registered_families()) {
    if (model_type == f.model_type) return f;
  }
  throw std::invalid_argument(fmt::format(
      "unsupported model_type '{}' (supported: {}); `--model hf` (transformers) can run it",
      model_type, fmt::join(supported_model_types(), ", ")));
}

}  // namespace prefix_scorer
