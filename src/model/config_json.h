#pragma once
// Reading config.json's fields as transformers does: absent and null alike take the default, integers checked as
// integers, a missing required field named. Shared by ModelConfig::from_json and the families' own keys.

#include "json_integer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace prefix_scorer::config_json {

using nlohmann::json;

// A field's value, or `fallback` when it is absent or null.
template <typename T>
T get_or(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if constexpr (std::is_same_v<T, int64_t>) return json_integer(*it, fmt::format("config.json: field '{}'", key));
  if constexpr (std::is_same_v<T, std::vector<int64_t>>) {  // each entry checked as a scalar is
    if (!it->is_array())
      throw std::invalid_argument(fmt::format("config.json: field '{}' has the wrong type ({})", key, it->dump()));
    std::vector<int64_t> values;
    for (const auto& value : *it) values.push_back(json_integer(value, fmt::format("config.json: field '{}'", key)));
    return values;
  }
  try {
    return it->template get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument(fmt::format("config.json: field '{}' has the wrong type ({})", key, it->dump()));
  }
}

inline bool has_field(const json& j, const char* key) { return j.contains(key) && !j[key].is_null(); }

template <typename T>
T require(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null())
    throw std::invalid_argument(fmt::format("config.json: required field '{}' is missing", key));
  return get_or<T>(j, key, T{});
}

inline const json* object_at(const json& j, const char* key) {
  return j.contains(key) && j[key].is_object() ? &j[key] : nullptr;
}

// A layer index of per_layer_config, whose keys are the indices as strings.
inline int64_t per_layer_index(const std::string& key, int64_t num_layers) {
  int64_t layer = -1;
  try {
    size_t used = 0;
    layer = std::stoll(key, &used);
    if (used != key.size()) layer = -1;
  } catch (const std::exception&) {
  }
  if (layer < 0 || layer >= num_layers)
    throw std::invalid_argument(
        fmt::format("config.json: per_layer_config names layer '{}' of a model of {} layers", key, num_layers));
  return layer;
}

// A field that is absent takes `absent`; one that is null means "none" (0).
template <typename T>
T optional_field(const json& j, const char* key, T absent) {
  if (!j.contains(key)) return absent;
  return get_or<T>(j, key, T{0});
}

// Throws unless `type` is one of the layer types `supported` (config.json's layer_types or its family's key).
inline void check_layer_type(const std::string& type, std::initializer_list<const char*> supported) {
  for (const char* name : supported)
    if (type == name) return;
  throw std::invalid_argument(
      fmt::format("config.json: layer type '{}' (supported here: {})", type, fmt::join(supported, ", ")));
}

}  // namespace prefix_scorer::config_json
