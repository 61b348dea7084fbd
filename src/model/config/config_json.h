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

// A field's value, or `fallback` when it is absent or null. Defined in config_json.cpp for the types below, once for
// every family file (instantiated in each, nlohmann's conversions made most of their compile time).
template <typename T>
T get_or(const json& j, const char* key, T fallback);
extern template bool get_or(const json&, const char*, bool);
extern template int64_t get_or(const json&, const char*, int64_t);
extern template double get_or(const json&, const char*, double);
extern template std::string get_or(const json&, const char*, std::string);
extern template std::vector<int64_t> get_or(const json&, const char*, std::vector<int64_t>);
extern template std::vector<double> get_or(const json&, const char*, std::vector<double>);
extern template std::vector<std::string> get_or(const json&, const char*, std::vector<std::string>);

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
