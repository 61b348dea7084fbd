// The synthetic shapes' common sizes, and the lookup of a shape by name over every family's list.

#include "model/families/families.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace prefix_scorer {
namespace families {

nlohmann::json shape(const char* model_type, int64_t vocab, int64_t hidden, int64_t intermediate, int64_t layers,
                     int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t max_positions) {
  return {{"model_type", model_type}, {"vocab_size", vocab},          {"hidden_size", hidden},
          {"intermediate_size", intermediate}, {"num_hidden_layers", layers}, {"num_attention_heads", heads},
          {"num_key_value_heads", kv_heads},  {"head_dim", head_dim},     {"max_position_embeddings", max_positions},
          {"rms_norm_eps", 1e-5}};
}

nlohmann::json tiny_shape(const char* model_type) {
  nlohmann::json j = shape(model_type, 2048, 128, 384, 4, 4, 2, 32, 4096);
  j["tie_word_embeddings"] = true;
  return j;
}

}  // namespace families

std::vector<std::string> synthetic_shape_names() {
  std::vector<std::string> names;
  for (const ModelFamily& family : registered_families())
    for (const SyntheticShape& shape : family.synthetic_shapes) names.emplace_back(shape.name);
  return names;
}

nlohmann::json synthetic_shape_keys(const std::string& name) {
  for (const ModelFamily& family : registered_families())
    for (const SyntheticShape& shape : family.synthetic_shapes)
      if (name == shape.name) return shape.keys();
  throw std::invalid_argument(
      fmt::format("unknown synthetic model '{}' (known: {})", name, fmt::join(synthetic_shape_names(), ", ")));
}

}  // namespace prefix_scorer
