#include "model/config/rope_keys.h"

#include "model/config/config_enums.h"
#include "model/config/config_json.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace prefix_scorer {
namespace {

using config_json::get_or;
using config_json::has_field;
using config_json::json;
using config_json::object_at;

// YaRN as transformers computes it: factor (default max_position_embeddings / original), attention_factor (default
// from mscale and mscale_all_dim, else 0.1 ln(factor) + 1), beta_fast and beta_slow (32 and 1), truncate (true).
RopeConfig parse_yarn(const json& d, int64_t max_positions, RopeConfig rope) {
  const auto original = static_cast<double>(rope.original_max_position_embeddings);
  rope.factor = get_or<double>(d, "factor", original > 0 ? static_cast<double>(max_positions) / original : 1.0);
  auto mscale = [&](double m) { return rope.factor <= 1 ? 1.0 : 0.1 * m * std::log(rope.factor) + 1.0; };
  const double m = get_or<double>(d, "mscale", 0), m_all = get_or<double>(d, "mscale_all_dim", 0);
  rope.attention_factor = get_or<double>(d, "attention_factor", m != 0 && m_all != 0 ? mscale(m) / mscale(m_all) : mscale(1));
  // transformers takes a zero beta as unset
  rope.beta_fast = get_or<double>(d, "beta_fast", 0) != 0 ? get_or<double>(d, "beta_fast", 0) : 32.0;
  rope.beta_slow = get_or<double>(d, "beta_slow", 0) != 0 ? get_or<double>(d, "beta_slow", 0) : 1.0;
  rope.truncate = get_or<bool>(d, "truncate", true);
  return rope;
}

// One rope's settings from a dict of rope_type (or type), rope_theta, factor, the llama3 and the longrope keys.
// `top` is the whole config, for the keys that phi3 keeps outside the dict.
RopeConfig parse_rope_dict(const json& d, double theta, const json& top, const ModelFamily& family) {
  RopeConfig rope;
  const bool top_level_keys = family.rope_keys_at_top_level;
  rope.theta = get_or<double>(d, "rope_theta", theta);
  std::string type = get_or<std::string>(d, "rope_type", get_or<std::string>(d, "type", "default"));
  if (top_level_keys && (type == "su" || type == "yarn")) type = "longrope";  // as Phi3Config renames them
  rope.type = parse_rope_type(type);
  rope.low_freq_factor = get_or<double>(d, "low_freq_factor", rope.low_freq_factor);
  rope.high_freq_factor = get_or<double>(d, "high_freq_factor", rope.high_freq_factor);
  rope.mscale_all_dim = get_or<double>(d, "mscale_all_dim", 0);  // latent attention's, whatever the type
  // transformers: phi3 keeps original_max_position_embeddings at the top level (4096 when absent) and its
  // partial_rotary_factor in either place; longrope elsewhere takes max_position_embeddings when the dict has none.
  const int64_t max_positions = get_or<int64_t>(top, "max_position_embeddings", 0);
  const bool longrope = rope.type == RopeType::kLongRope, yarn = rope.type == RopeType::kYarn;
  double default_partial = family.default_partial_rotary;
  if (family.rotary_dim_key != nullptr && has_field(top, family.rotary_dim_key) && has_field(top, "head_dim"))
    default_partial = top[family.rotary_dim_key].get<double>() / top["head_dim"].get<double>();
  if (family.partial_rotary_key != nullptr) default_partial = get_or<double>(top, family.partial_rotary_key, default_partial);
  rope.partial_rotary_factor = get_or<double>(d, "partial_rotary_factor", default_partial);
  if (top_level_keys) {
    rope.original_max_position_embeddings = get_or<int64_t>(top, "original_max_position_embeddings", 4096);
  } else {
    rope.original_max_position_embeddings = get_or<int64_t>(
        d, "original_max_position_embeddings",
        longrope || yarn ? max_positions : rope.original_max_position_embeddings);
  }
  if (yarn) return parse_yarn(d, max_positions, rope);
  // longrope's factor defaults to max_position_embeddings / original, its attention factor to
  // sqrt(1 + ln(factor) / ln(original)).
  const auto original = static_cast<double>(rope.original_max_position_embeddings);
  rope.factor = get_or<double>(d, "factor", longrope && original > 0 ? static_cast<double>(max_positions) / original : 1.0);
  if (!longrope) return rope;
  const double default_attention = rope.factor <= 1.0 || original <= 1.0
                                       ? 1.0
                                       : std::sqrt(1.0 + std::log(rope.factor) / std::log(original));
  rope.attention_factor = get_or<double>(d, "attention_factor", default_attention);
  rope.short_factor = get_or<std::vector<double>>(d, "short_factor", {});
  rope.long_factor = get_or<std::vector<double>>(d, "long_factor", {});
  return rope;
}

}  // namespace

void read_rope(const json& j, const ModelFamily& family, ModelConfig& c) {
  const double theta = get_or<double>(j, family.theta_key, family.default_rope_theta);
  const json* parameters = object_at(j, "rope_parameters");
  const json* scaling = parameters != nullptr ? parameters : object_at(j, "rope_scaling");
  const json fallback = family.default_rope_scaling != nullptr ? json::parse(family.default_rope_scaling) : json::object();
  json dict = scaling != nullptr ? *scaling : fallback;
  const std::string type = get_or<std::string>(dict, "rope_type", get_or<std::string>(dict, "type", ""));
  if (family.dynamic_rope_is_ntk_alpha && type == "dynamic" && has_field(dict, "alpha")) {  // "type" in older configs
    // NTK-alpha: a fixed stretch of the base, whatever the length (HunYuan's compute_ntk_alpha_rope_parameters)
    const auto d = static_cast<double>(c.head_dim);
    const double base = get_or<double>(dict, "rope_theta", theta) * std::pow(get_or<double>(dict, "alpha", 1.0), d / (d - 2));
    dict = json{{"rope_type", "default"}, {"rope_theta", base}};
  }
  if (object_at(dict, "full_attention") != nullptr) {  // a rope by layer type
    c.rope = parse_rope_dict(dict["full_attention"], theta, j, family);
    const json* sliding = object_at(dict, "sliding_attention");
    // gemma3's sliding layers default to the local base; olmo3's to the model's theta
    c.sliding_rope = parse_rope_dict(sliding != nullptr ? *sliding : json::object(),
                                     family.local_rope_base ? 10000.0 : theta, j, family);
    return;
  }
  c.rope = parse_rope_dict(dict, theta, j, family);
  if (family.query_scale_by_position) {  // transformers reads both keys from the dict, and fails without them
    for (const char* key : {"llama_4_scaling_beta", "original_max_position_embeddings"})
      if (!has_field(dict, key))
        throw std::invalid_argument(fmt::format("config.json: {} rope_parameters lacks '{}'", c.model_type, key));
    c.rope.llama4_scaling_beta = get_or<double>(dict, "llama_4_scaling_beta", 0);
    c.rope.original_max_position_embeddings = get_or<int64_t>(dict, "original_max_position_embeddings", 0);
  }
  if (family.sliding_rope_unscaled && c.rope.type != RopeType::kDefault) {
    RopeConfig unscaled;  // olmo3 in the older spelling: rope_scaling is the full-attention layers' alone
    unscaled.theta = theta;
    c.sliding_rope = unscaled;
  }
  if (family.local_rope_base) {  // the older spelling: the local base, no scaling
    RopeConfig local;
    local.theta = get_or<double>(j, "rope_local_base_freq", 10000.0);
    c.sliding_rope = local;
  }
}

json rope_json(const RopeConfig& rope) {
  json parameters = {{"rope_type", std::string(to_string(rope.type))}, {"rope_theta", rope.theta}};
  if (rope.type != RopeType::kDefault) parameters["factor"] = rope.factor;
  if (rope.type == RopeType::kLlama3) {
    parameters["low_freq_factor"] = rope.low_freq_factor;
    parameters["high_freq_factor"] = rope.high_freq_factor;
    parameters["original_max_position_embeddings"] = rope.original_max_position_embeddings;
  }
  if (rope.type == RopeType::kYarn) {
    parameters["attention_factor"] = rope.attention_factor;
    parameters["beta_fast"] = rope.beta_fast;
    parameters["beta_slow"] = rope.beta_slow;
    parameters["truncate"] = rope.truncate;
    parameters["original_max_position_embeddings"] = rope.original_max_position_embeddings;
  }
  if (rope.type == RopeType::kLongRope) {
    parameters["short_factor"] = rope.short_factor;
    parameters["long_factor"] = rope.long_factor;
    parameters["attention_factor"] = rope.attention_factor;
    parameters["original_max_position_embeddings"] = rope.original_max_position_embeddings;
  }
  if (rope.partial_rotary_factor != 1.0) parameters["partial_rotary_factor"] = rope.partial_rotary_factor;
  if (rope.mscale_all_dim != 0) parameters["mscale_all_dim"] = rope.mscale_all_dim;
  if (rope.llama4_scaling_beta != 0) {
    parameters["llama_4_scaling_beta"] = rope.llama4_scaling_beta;
    parameters["original_max_position_embeddings"] = rope.original_max_position_embeddings;
  }
  return parameters;
}

}  // namespace prefix_scorer
