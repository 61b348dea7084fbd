#pragma once
// The mixture-of-experts config keys, read and written under each family's names (ExpertTraits).

#include "model/config/model_config.h"
#include "model/config/model_family.h"

#include <nlohmann/json_fwd.hpp>

namespace prefix_scorer {

// The MoE keys as the family's transformers config reads them (needs the sizes and num_layers read).
void read_experts(const nlohmann::json& j, const ExpertTraits& e, ModelConfig& c);
// The MoE keys as read_experts reads them back, under the family's names; also with none (num_experts 0), which
// reads back as none, not as the default.
void write_experts(const ModelConfig& c, const ExpertTraits& e, nlohmann::json& j);

}  // namespace prefix_scorer
