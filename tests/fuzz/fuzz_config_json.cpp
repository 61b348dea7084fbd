// config.json: any text is a config or a std::invalid_argument; a valid config written back reads the same.
#include "model/config/model_config.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using prefix_scorer::ModelConfig;
  try {
    const ModelConfig config = ModelConfig::from_json(std::string(reinterpret_cast<const char*>(data), size));
    config.validate();
    const std::string written = config.to_json();
    if (ModelConfig::from_json(written).to_json() != written) std::abort();
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
