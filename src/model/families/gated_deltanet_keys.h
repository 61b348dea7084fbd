#pragma once
// The config keys of Gated DeltaNet layers (linear_attention) as the families that have them read and write them.

#include "model/config/model_config.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>

namespace prefix_scorer::families {

// The layers' sizes when the config omits them.
struct DeltaNetDefaults {
  int64_t key_heads = 16, value_heads = 32, key_head_dim = 128, value_head_dim = 128;
  bool last_layer_attention = false;  // without layer_types, the last layer attends even off the interval
};

// linear_num_key_heads, linear_num_value_heads, linear_key_head_dim, linear_value_head_dim and
// linear_conv_kernel_dim (checked), then the layers: layer_types' linear_attention ones or, without it, all but every
// full_attention_interval-th (4 by default).
void read_gated_deltanet(const nlohmann::json& j, ModelConfig& c, const DeltaNetDefaults& defaults);
// Those keys (layer_types for the layers) as read_gated_deltanet reads them back.
void write_gated_deltanet(const ModelConfig& c, nlohmann::json& j);

// layer_types' linear_attention and full_attention layers, one a layer (checked), where the config has it; false
// where it has none (the family's own rule then).
bool read_linear_layer_types(const nlohmann::json& j, ModelConfig& c);
// The layers as layer_types.
void write_linear_layer_types(const ModelConfig& c, nlohmann::json& j);

}  // namespace prefix_scorer::families
