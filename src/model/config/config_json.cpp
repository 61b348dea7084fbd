#include "model/config/config_json.h"

namespace prefix_scorer::config_json {

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

template bool get_or(const json&, const char*, bool);
template int64_t get_or(const json&, const char*, int64_t);
template double get_or(const json&, const char*, double);
template std::string get_or(const json&, const char*, std::string);
template std::vector<int64_t> get_or(const json&, const char*, std::vector<int64_t>);
template std::vector<double> get_or(const json&, const char*, std::vector<double>);
template std::vector<std::string> get_or(const json&, const char*, std::vector<std::string>);

}  // namespace prefix_scorer::config_json
