#pragma once
// The Mamba2 config keys the hybrid families share (Granite 4's and Falcon-H1's mamba_ keys, time_step_limit) and
// the checks every Mamba2 layer's sizes pass, whichever keys gave them.

#include "model/config/model_config.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>

namespace prefix_scorer::families {

// time_step_limit, the clamp of a Mamba2 prefill's dt: [min, max] with 0 <= min < max, max finite or infinite (no
// bound: 0 here); (0, inf) when absent.
void read_time_step_limit(const nlohmann::json& j, ModelConfig& c);

// Throws unless the Mamba2 sizes fit and the convolution's activation is SiLU (the one computed here).
void check_mamba2(const ModelConfig& c, const std::string& conv_activation);

// The mamba_ keys with their defaults (mamba_n_heads, mamba_d_head, "auto": the inner width over the heads,
// mamba_n_groups, mamba_d_state, mamba_d_conv, mamba_chunk_size, mamba_conv_bias, mamba_proj_bias), each head's width
// checked against `inner` (named `inner_name`), time_step_limit, the convolution's activation (hidden_act).
void read_mamba_keys(const nlohmann::json& j, ModelConfig& c, int64_t inner, const char* inner_name);
// Those keys as read_mamba_keys reads them back.
void write_mamba_keys(const ModelConfig& c, nlohmann::json& j);

}  // namespace prefix_scorer::families
