#pragma once
// config.json's names of the activations, rope types and layer kinds, parsed once into their enums.

#include "model/config/model_config.h"

#include <string>

namespace prefix_scorer {

// Each throws std::invalid_argument naming the value and the supported ones.
Activation parse_activation(const std::string& name);
RopeType parse_rope_type(const std::string& name);
LayerKind parse_layer_kind(const std::string& name);

}  // namespace prefix_scorer
