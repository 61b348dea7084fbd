#include "model/families/gated_deltanet_keys.h"

#include "model/config/config_json.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace prefix_scorer::families {

using config_json::check_layer_type;
using config_json::get_or;
using config_json::has_field;
using config_json::json;

void read_gated_deltanet(const json& j, ModelConfig& c, const DeltaNetDefaults& defaults) {
  c.linear_key_heads = get_or<int64_t>(j, "linear_num_key_heads", defaults.key_heads);
  c.linear_value_heads = get_or<int64_t>(j, "linear_num_value_heads", defaults.value_heads);
  c.linear_key_head_dim = get_or<int64_t>(j, "linear_key_head_dim", defaults.key_head_dim);
  c.linear_value_head_dim = get_or<int64_t>(j, "linear_value_head_dim", defaults.value_head_dim);
  c.linear_conv_taps = get_or<int64_t>(j, "linear_conv_kernel_dim", 4);
  if (c.linear_key_heads < 1 || c.linear_value_heads % c.linear_key_heads != 0 || c.linear_key_head_dim < 1 ||
      c.linear_value_head_dim < 1 || c.linear_conv_taps < 2)
    throw std::invalid_argument(fmt::format(
        "config.json: linear attention of {} key heads of {}, {} value heads of {}, {} taps does not fit (value heads "
        "a multiple of key heads, at least 2 taps)", c.linear_key_heads, c.linear_key_head_dim, c.linear_value_heads,
        c.linear_value_head_dim, c.linear_conv_taps));
  if (!read_linear_layer_types(j, c)) {
    const int64_t interval = get_or<int64_t>(j, "full_attention_interval", 4);
    if (interval < 1)
      throw std::invalid_argument(fmt::format("config.json: full_attention_interval must be >= 1, got {}", interval));
    for (int64_t i = 0; i < c.num_layers; ++i) c.linear_attention_layers.push_back((i + 1) % interval != 0);
    auto& layers = c.linear_attention_layers;
    if (defaults.last_layer_attention && !layers.empty() && std::find(layers.begin(), layers.end(), false) == layers.end())
      layers.back() = false;
  }
}

bool read_linear_layer_types(const json& j, ModelConfig& c) {
  if (!has_field(j, "layer_types")) return false;
  for (const auto& type : get_or<std::vector<std::string>>(j, "layer_types", {})) {
    check_layer_type(type, {"linear_attention", "full_attention"});
    c.linear_attention_layers.push_back(type == "linear_attention");
  }
  if (static_cast<int64_t>(c.linear_attention_layers.size()) != c.num_layers)
    throw std::invalid_argument(fmt::format("config.json: layer_types has {} entries for {} layers",
                                            c.linear_attention_layers.size(), c.num_layers));
  return true;
}

void write_linear_layer_types(const ModelConfig& c, json& j) {
  json types = json::array();
  for (int64_t i = 0; i < c.num_layers; ++i)
    types.push_back(c.is_linear_attention(i) ? "linear_attention" : "full_attention");
  j["layer_types"] = types;
}

void write_gated_deltanet(const ModelConfig& c, json& j) {
  j.update({{"linear_num_key_heads", c.linear_key_heads}, {"linear_num_value_heads", c.linear_value_heads},
            {"linear_key_head_dim", c.linear_key_head_dim}, {"linear_value_head_dim", c.linear_value_head_dim},
            {"linear_conv_kernel_dim", c.linear_conv_taps}});
  write_linear_layer_types(c, j);
}

}  // namespace prefix_scorer::families
