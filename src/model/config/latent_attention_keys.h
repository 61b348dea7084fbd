#pragma once
// The multi-head latent attention keys, as DeepseekV3Config and its kin read them: read with a family's defaults,
// and written back.

#include "model/config/model_config.h"
#include "model/config/model_family.h"

#include <nlohmann/json_fwd.hpp>

namespace prefix_scorer {

// kv_lora_rank, q_lora_rank (null: queries through q_proj directly), qk_nope_head_dim, qk_rope_head_dim (read into
// head_dim: the rotated key's width, rotated whole), v_head_dim and rope_interleave; throws where they do not fit.
void read_latent_attention(const nlohmann::json& j, const LatentDefaults& d, ModelConfig& c);
// Those keys as read_latent_attention reads them back.
void write_latent_attention(const ModelConfig& c, nlohmann::json& j);

}  // namespace prefix_scorer
