#pragma once
// The rope's config keys as transformers reads them (rope_parameters, or rope_theta with rope_scaling; a rope by layer
// type; the family's own spellings) and written back.

#include "model/config/model_config.h"
#include "model/config/model_family.h"

#include <nlohmann/json_fwd.hpp>

namespace prefix_scorer {

// Rope settings live in `rope_parameters` (newer transformers) or in `rope_theta` + `rope_scaling` (older); gemma3
// gives full-attention and sliding layers a rope each (`rope_parameters` by layer type, or `rope_local_base_freq`).
// Needs c.head_dim and c.model_type.
void read_rope(const nlohmann::json& j, const ModelFamily& family, ModelConfig& c);
// One rope as a rope_parameters dict that read_rope reads back.
nlohmann::json rope_json(const RopeConfig& rope);

}  // namespace prefix_scorer
