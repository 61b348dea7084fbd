#include "model/families/mamba2_keys.h"

#include "model/config/config_json.h"
#include "model/config/json_special_floats.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <stdexcept>

namespace prefix_scorer::families {

using config_json::get_or;
using config_json::has_field;
using config_json::json;

void read_time_step_limit(const json& j, ModelConfig& c) {
  if (!has_field(j, "time_step_limit")) return;
  const json& limit = j["time_step_limit"];
  if (!limit.is_array() || limit.size() != 2)
    throw std::invalid_argument(fmt::format("config.json: time_step_limit must be [min, max], got {}", limit.dump()));
  const double low = json_float(limit[0], "config.json: time_step_limit[0]");
  const double high = json_float(limit[1], "config.json: time_step_limit[1]");
  if (!(std::isfinite(low) && low >= 0 && high > low))  // NaN fails every comparison
    throw std::invalid_argument(fmt::format(
        "config.json: time_step_limit must be [min, max] with 0 <= min < max (max may be Infinity), got [{}, {}]", low,
        high));
  c.mamba_dt_min = low;
  c.mamba_dt_max = std::isinf(high) ? 0 : high;
}

void check_mamba2(const ModelConfig& c, const std::string& conv_activation) {
  if (c.mamba_heads < 1 || c.mamba_head_dim < 1 || c.mamba_groups < 1 || c.mamba_heads % c.mamba_groups != 0 ||
      c.mamba_state_size < 1 || c.mamba_taps < 2 || c.mamba_chunk < 1)
    throw std::invalid_argument(fmt::format(
        "config.json: Mamba2 layers of {} heads of {} in {} groups, a state of {}, {} taps and chunks of {} do not fit "
        "(heads a multiple of groups, at least 2 taps, every size positive)", c.mamba_heads, c.mamba_head_dim,
        c.mamba_groups, c.mamba_state_size, c.mamba_taps, c.mamba_chunk));
  if (conv_activation != "silu")
    throw std::invalid_argument(fmt::format("config.json: Mamba2's convolution takes SiLU here, not {}", conv_activation));
}

void read_mamba_keys(const json& j, ModelConfig& c, int64_t inner, const char* inner_name) {
  c.mamba_heads = get_or<int64_t>(j, "mamba_n_heads", 128);
  c.mamba_groups = get_or<int64_t>(j, "mamba_n_groups", 1);
  c.mamba_state_size = get_or<int64_t>(j, "mamba_d_state", 256);
  c.mamba_taps = get_or<int64_t>(j, "mamba_d_conv", 4);
  c.mamba_chunk = get_or<int64_t>(j, "mamba_chunk_size", 256);
  c.mamba_conv_bias = get_or<bool>(j, "mamba_conv_bias", true);
  c.mamba_proj_bias = get_or<bool>(j, "mamba_proj_bias", false);
  const bool auto_head = !has_field(j, "mamba_d_head") || (j["mamba_d_head"].is_string() && j["mamba_d_head"] == "auto");
  c.mamba_head_dim = auto_head ? (c.mamba_heads > 0 ? inner / c.mamba_heads : 0) : get_or<int64_t>(j, "mamba_d_head", 0);
  if (c.mamba_heads * c.mamba_head_dim != inner)
    throw std::invalid_argument(fmt::format("config.json: mamba_n_heads {} times mamba_d_head {} must be {} ({})",
                                            c.mamba_heads, c.mamba_head_dim, inner_name, inner));
  read_time_step_limit(j, c);
  check_mamba2(c, get_or<std::string>(j, "hidden_act", "silu"));
}

void write_mamba_keys(const ModelConfig& c, json& j) {
  const json infinity = {{"__float__", "Infinity"}};
  j.update({{"mamba_n_heads", c.mamba_heads}, {"mamba_d_head", c.mamba_head_dim}, {"mamba_n_groups", c.mamba_groups},
            {"mamba_d_state", c.mamba_state_size}, {"mamba_d_conv", c.mamba_taps}, {"mamba_chunk_size", c.mamba_chunk},
            {"mamba_conv_bias", c.mamba_conv_bias}, {"mamba_proj_bias", c.mamba_proj_bias},
            {"time_step_limit", {c.mamba_dt_min, c.mamba_dt_max > 0 ? json(c.mamba_dt_max) : infinity}}});
}

}  // namespace prefix_scorer::families
