#include "model/model_config.h"

#include "json_integer.h"
#include "model/config_enums.h"
#include "model/config_json.h"
#include "model/json_special_floats.h"
#include "model/model_family.h"
#include "prefix_scorer/errors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <initializer_list>
#include <cmath>
#include <numeric>
#include <filesystem>
#include <type_traits>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace prefix_scorer {
namespace {

using nlohmann::json;
using config_json::check_layer_type;
using config_json::get_or;
using config_json::has_field;
using config_json::object_at;
using config_json::optional_field;
using config_json::per_layer_index;
using config_json::require;




// Whether the config's quantization is the one the family's checkpoints carry, which the loader dequantizes as
// transformers does without its kernels (MXFP4 exactly: every value is a 4-bit float times a power of two).
bool accepted_quantization(const json& j, const ModelFamily& family) {
  const json* q = j.contains("quantization_config") && j["quantization_config"].is_object() ? &j["quantization_config"]
                                                                                             : nullptr;
  return q != nullptr && family.quantization != nullptr &&
         get_or<std::string>(*q, "quant_method", "") == family.quantization;
}

// Block-FP8 (quant_method "fp8", as DeepSeek, Qwen, MiniMax and GLM ship it): its weight_block_size; zeros for any
// other config. FP8 without blocks (per-tensor scales) is refused by name.
std::array<int64_t, 2> parse_block_fp8(const json& j) {
  if (!j.contains("quantization_config") || !j["quantization_config"].is_object()) return {0, 0};
  const json& q = j["quantization_config"];
  if (get_or<std::string>(q, "quant_method", "") != "fp8") return {0, 0};
  const auto block = get_or<std::vector<int64_t>>(q, "weight_block_size", {});
  if (block.size() != 2 || block[0] < 1 || block[1] < 1)
    throw std::invalid_argument(
        "config.json: fp8 quantization without a weight_block_size of two positive sizes (per-tensor FP8) is not "
        "supported; block-FP8 is");
  if (get_or<std::string>(q, "fmt", "e4m3") != "e4m3")
    throw std::invalid_argument(fmt::format("config.json: fp8 format '{}' is not supported (e4m3 is)",
                                            get_or<std::string>(q, "fmt", "")));
  return {block[0], block[1]};
}

// A size under the family's key, or under transformers' usual name (which GPT-2's config maps onto its own).
int64_t size_field(const json& j, const char* key, const char* usual) {
  return has_field(j, key) ? get_or<int64_t>(j, key, 0) : require<int64_t>(j, usual);
}

// GPT-2: learned positions instead of rope, and its attention options as GPT2Attention reads them (the eager-only
// reorder_and_upcast_attn changes no number in fp32 and is ignored, as transformers' default SDPA path does).
void parse_gpt2_attention(const json& j, ModelConfig& c) {
  if (get_or<bool>(j, "add_cross_attention", false))
    throw std::invalid_argument("config.json: 'add_cross_attention' is not supported (decoder-only models are)");
  c.learned_positions = true;
  c.rope_layers.assign(std::max<int64_t>(c.num_layers, 0), false);
  if (!get_or<bool>(j, "scale_attn_weights", true)) c.attention_multiplier = 1.0;
  c.scale_by_inverse_layer = get_or<bool>(j, "scale_attn_by_inverse_layer_idx", false);
}

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
  const bool phi3 = family.rope_keys_at_top_level;
  rope.theta = get_or<double>(d, "rope_theta", theta);
  std::string type = get_or<std::string>(d, "rope_type", get_or<std::string>(d, "type", "default"));
  if (phi3 && (type == "su" || type == "yarn")) type = "longrope";  // as Phi3Config renames them
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
  if (phi3) {
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


// Rope settings live in `rope_parameters` (newer transformers) or in `rope_theta` + `rope_scaling` (older); gemma3
// gives full-attention and sliding layers a rope each (`rope_parameters` by layer type, or `rope_local_base_freq`).
void parse_rope(const json& j, const ModelFamily& family, ModelConfig& c) {
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


// gemma2 and gemma3's layer_types, or their default pattern: every `period`-th layer full, the others sliding.
std::vector<LayerKind> parse_layer_types(const json& j, int64_t num_layers, int64_t period, bool first_full = false) {
  std::vector<LayerKind> kinds;
  if (!j.contains("layer_types") || j["layer_types"].is_null()) {
    for (int64_t i = 0; i < num_layers; ++i)
      kinds.push_back((i + 1) % period != 0 && !(first_full && i == 0) ? LayerKind::kSlidingAttention
                                                                       : LayerKind::kFullAttention);
    return kinds;
  }
  for (const auto& type : get_or<std::vector<std::string>>(j, "layer_types", {})) kinds.push_back(parse_layer_kind(type));
  return kinds;
}

// EXAONE 4's sliding_window_pattern as text: "L" (local, sliding) and "G" (global) for layers 0, 1, ..., repeated;
// the last layer global whatever the pattern says.
std::vector<LayerKind> pattern_layer_types(const std::string& pattern, int64_t num_layers) {
  if (pattern.empty() || pattern.find_first_not_of("LG") != std::string::npos)
    throw std::invalid_argument(fmt::format("config.json: sliding_window_pattern '{}' is not a sequence of L and G", pattern));
  std::vector<LayerKind> kinds;
  for (int64_t i = 0; i < num_layers; ++i) {
    const bool local = pattern[i % pattern.size()] == 'L' && i + 1 < num_layers;
    kinds.push_back(local ? LayerKind::kSlidingAttention : LayerKind::kFullAttention);
  }
  return kinds;
}

const char* const kSyntheticNames =
    "tiny, small, llama-1b, llama-8b, tiny-gemma2, tiny-gemma3, tiny-moe, tiny-phi3, gemma2-2b, gemma3-1b, phi3-mini, "
    "qwen3-moe-a3b, pythia-1b, phi-2, starcoder2-3b, gpt2, gpt-oss-20b, tiny-gemma4, gemma4-e2b, tiny-glm4-moe, glm4.5-air, "
    "ernie4.5-21b-a3b, hunyuan-a13b, minimax-m2, seed-oss-36b, exaone4-32b, hunyuan-0.5b, ernie4.5-0.3b, apertus-8b, "
    "tiny-qwen3.5, qwen3.5-9b, qwen3.5-35b-a3b, qwen3-next-80b-a3b, olmo-hybrid-7b, lfm2-1.2b, tiny-granite4, "
    "granite-4.0-h-tiny, lfm3-1.7b, nemotron-h-8b, falcon-h1-1.5b, lfm2-8b-a1b, tiny-deepseek-v3, deepseek-v3, "
    "kimi-k2, glm-4.7-flash, mistral-small-4, deepseek-v3.2, glm-5";

// Which layers are MoE by the family's rule (empty: all).
std::vector<bool> parse_moe_layers(const json& j, const ExpertTraits& e, int64_t num_layers) {
  std::vector<bool> moe;
  switch (e.layers) {
    case MoeLayerRule::kAll:
      return moe;
    case MoeLayerRule::kSparseStep: {
      const int64_t step = get_or<int64_t>(j, "decoder_sparse_step", 1);
      if (step < 1)
        throw std::invalid_argument(fmt::format("config.json: decoder_sparse_step must be >= 1, got {}", step));
      const auto dense = get_or<std::vector<int64_t>>(j, "mlp_only_layers", {});
      for (int64_t i = 0; i < num_layers; ++i)
        moe.push_back((i + 1) % step == 0 && std::find(dense.begin(), dense.end(), i) == dense.end());
      return moe;
    }
    case MoeLayerRule::kMlpLayerTypes:
      if (has_field(j, "mlp_layer_types")) {
        const auto types = get_or<std::vector<std::string>>(j, "mlp_layer_types", {});
        if (static_cast<int64_t>(types.size()) != num_layers)
          throw std::invalid_argument(
              fmt::format("config.json: mlp_layer_types has {} entries for {} layers", types.size(), num_layers));
        for (const std::string& type : types) {
          check_layer_type(type, {"dense", "sparse"});
          moe.push_back(type == "sparse");
        }
        return moe;
      }
      [[fallthrough]];  // without them, kFirstDense's layers
    case MoeLayerRule::kFirstDense: {  // the family's key, or (none named) its default
      const int64_t dense = e.first_dense_key == nullptr ? e.default_first_dense
                                                         : get_or<int64_t>(j, e.first_dense_key, e.default_first_dense);
      for (int64_t i = 0; i < num_layers; ++i) moe.push_back(i >= dense);
      return moe;
    }
    case MoeLayerRule::kStartEndEvery: {
      const int64_t start = get_or<int64_t>(j, "moe_layer_start_index", 1);
      int64_t end = get_or<int64_t>(j, "moe_layer_end_index", -1);
      if (end == -1) end = num_layers - 1;
      const int64_t every = get_or<int64_t>(j, "moe_layer_interval", 1);
      if (every < 1)
        throw std::invalid_argument(fmt::format("config.json: moe_layer_interval must be >= 1, got {}", every));
      for (int64_t i = 0; i < num_layers; ++i) moe.push_back((i + 1) % every == 0 && i >= start && i <= end);
      return moe;
    }
  }
  return moe;
}

// The top-k of every layer: one integer, or (hunyuan_v1_moe's moe_topk) a list of one per layer.
void parse_experts_per_token(const json& j, const ExpertTraits& e, ModelConfig& c) {
  if (!j.contains(e.per_token_key) || !j[e.per_token_key].is_array()) {
    c.experts_per_token = get_or<int64_t>(j, e.per_token_key, e.default_per_token);
    return;
  }
  c.layer_experts_per_token = j[e.per_token_key].get<std::vector<int64_t>>();
  if (static_cast<int64_t>(c.layer_experts_per_token.size()) != c.num_layers)
    throw std::invalid_argument(fmt::format("config.json: {} has {} entries for {} layers", e.per_token_key,
                                            c.layer_experts_per_token.size(), c.num_layers));
  c.experts_per_token = *std::max_element(c.layer_experts_per_token.begin(), c.layer_experts_per_token.end());
}

// The MoE keys as the family's transformers config reads them.
void parse_experts(const json& j, const ExpertTraits& e, ModelConfig& c) {
  c.num_experts = e.experts_key != nullptr
                      ? get_or<int64_t>(j, e.experts_key, e.default_experts)
                      : get_or<int64_t>(j, "num_local_experts", get_or<int64_t>(j, "num_experts", e.default_experts));
  parse_experts_per_token(j, e, c);
  c.moe_intermediate_size = e.dense_sized ? c.intermediate_size
                                          : get_or<int64_t>(j, "moe_intermediate_size", e.default_size);
  c.router_scores = e.scores;
  c.router_fp32 = e.router_fp32;
  c.expert_correction_bias = e.correction_bias != nullptr &&
                             (e.correction_bias_key == nullptr || get_or<bool>(j, e.correction_bias_key, true));
  if (e.grouped) {
    c.expert_groups = get_or<int64_t>(j, "n_group", e.default_groups);
    c.expert_groups_chosen = get_or<int64_t>(j, "topk_group", e.default_groups_chosen);
  }
  c.norm_topk_prob = e.always_normalized || get_or<bool>(j, "norm_topk_prob", e.normalized_by_default);
  c.routing_norm_epsilon = e.norm_epsilon;
  if (e.norm_floor_key != nullptr) c.routing_norm_floor = get_or<double>(j, e.norm_floor_key, 1e-12);
  if (e.scaled) c.routed_scaling_factor = get_or<double>(j, e.scaling_key, e.default_scaling);
  c.scaled_after_sum = e.scaled_after_sum;
  if (e.logit_softcap_key != nullptr) c.router_logit_softcap = get_or<double>(j, e.logit_softcap_key, 0.0);
  c.routing_weights_fp32 = e.routing_fp32;
  c.expert_biases = e.stacked;
  if (e.clamped_swiglu) {
    c.swiglu_alpha = get_or<double>(j, "swiglu_alpha", 1.702);
    c.swiglu_limit = get_or<double>(j, "swiglu_limit", 7.0);
  }
  if (e.default_shared_size > 0) {
    c.shared_expert_intermediate_size = get_or<int64_t>(j, "shared_expert_intermediate_size", e.default_shared_size);
    c.shared_expert_gated = e.shared_behind_gate;
  }
  if (e.shared_count_key != nullptr)
    c.shared_expert_intermediate_size =
        get_or<int64_t>(j, e.shared_count_key, e.default_shared_count) * c.moe_intermediate_size;
  if (e.shared_dense_sized) c.shared_expert_intermediate_size = c.intermediate_size;
  c.moe_layers = parse_moe_layers(j, e, c.num_layers);
}

// smollm3: which layers rotate (no_rope_layers, 1 for rope; else every no_rope_layer_interval-th layer does not),
// and with a sliding window, which layers slide (layer_types; else the no-rope ones).
void parse_nope_layers(const json& j, ModelConfig& c) {
  std::vector<int64_t> uses_rope = get_or<std::vector<int64_t>>(j, "no_rope_layers", {});
  if (uses_rope.empty()) {
    const int64_t interval = get_or<int64_t>(j, "no_rope_layer_interval", 4);
    if (interval < 1)
      throw std::invalid_argument(fmt::format("config.json: no_rope_layer_interval must be >= 1, got {}", interval));
    for (int64_t i = 0; i < c.num_layers; ++i) uses_rope.push_back((i + 1) % interval != 0 ? 1 : 0);
  }
  if (static_cast<int64_t>(uses_rope.size()) != c.num_layers)
    throw std::invalid_argument(fmt::format("config.json: no_rope_layers has {} entries for {} layers",
                                            uses_rope.size(), c.num_layers));
  for (const int64_t rope : uses_rope) c.rope_layers.push_back(rope != 0);
  if (c.sliding_window == 0) return;
  if (j.contains("layer_types") && !j["layer_types"].is_null()) {
    c.layer_kinds = parse_layer_types(j, c.num_layers, 1);
    return;
  }
  for (const bool rope : c.rope_layers)
    c.layer_kinds.push_back(rope ? LayerKind::kFullAttention : LayerKind::kSlidingAttention);
}


// Qwen 3.5's Gated DeltaNet layers and their sizes, as Qwen3_5TextConfig reads them.
void parse_gated_deltanet(const json& j, ModelConfig& c, DeltaNetLayout layout) {
  const bool olmo = layout == DeltaNetLayout::kOlmoHybrid;
  c.attention_output_gate = !olmo;
  // OLMo hybrid's sizes default to the attention's: its heads, keys 3/4 of the hidden width, values twice as wide.
  c.linear_key_heads = get_or<int64_t>(j, "linear_num_key_heads", olmo ? c.num_heads : 16);
  c.linear_value_heads = get_or<int64_t>(j, "linear_num_value_heads", olmo ? c.num_heads : 32);
  const int64_t key_dim = olmo && c.linear_key_heads > 0 ? 3 * c.hidden_size / (4 * c.linear_key_heads) : 128;
  c.linear_key_head_dim = get_or<int64_t>(j, "linear_key_head_dim", key_dim);
  c.linear_value_head_dim = get_or<int64_t>(j, "linear_value_head_dim", olmo ? 2 * c.linear_key_head_dim : 128);
  c.linear_conv_taps = get_or<int64_t>(j, "linear_conv_kernel_dim", 4);
  if (olmo) {
    c.linear_beta_scale = get_or<bool>(j, "linear_allow_neg_eigval", true) ? 2 : 1;
    c.linear_norm_eps = 1e-5;
    c.recurrent_layers_pre_norm = true;
    // No rope where the config's rope_theta is null (as released): in rope_parameters, or beside a null one.
    auto null_at = [](const json& dict, const char* key) { return dict.contains(key) && dict[key].is_null(); };
    const bool rope = has_field(j, "rope_parameters") ? !null_at(j["rope_parameters"], "rope_theta")
                                                      : !null_at(j, "rope_theta");
    if (!rope) c.rope_layers.assign(c.num_layers, false);
  }
  if (c.linear_key_heads < 1 || c.linear_value_heads % c.linear_key_heads != 0 || c.linear_key_head_dim < 1 ||
      c.linear_value_head_dim < 1 || c.linear_conv_taps < 2)
    throw std::invalid_argument(fmt::format(
        "config.json: linear attention of {} key heads of {}, {} value heads of {}, {} taps does not fit (value heads "
        "a multiple of key heads, at least 2 taps)", c.linear_key_heads, c.linear_key_head_dim, c.linear_value_heads,
        c.linear_value_head_dim, c.linear_conv_taps));
  if (!has_field(j, "layer_types")) {
    const int64_t interval = get_or<int64_t>(j, "full_attention_interval", 4);
    if (interval < 1)
      throw std::invalid_argument(fmt::format("config.json: full_attention_interval must be >= 1, got {}", interval));
    for (int64_t i = 0; i < c.num_layers; ++i) c.linear_attention_layers.push_back((i + 1) % interval != 0);
    // OLMo hybrid keeps at least one attention layer: the last.
    if (olmo && c.num_layers > 0 && std::find(c.linear_attention_layers.begin(), c.linear_attention_layers.end(),
                                              false) == c.linear_attention_layers.end())
      c.linear_attention_layers.back() = false;
    return;
  }
  for (const auto& type : get_or<std::vector<std::string>>(j, "layer_types", {})) {
    check_layer_type(type, {"linear_attention", "full_attention"});
    c.linear_attention_layers.push_back(type == "linear_attention");
  }
  if (static_cast<int64_t>(c.linear_attention_layers.size()) != c.num_layers)
    throw std::invalid_argument(fmt::format("config.json: layer_types has {} entries for {} layers",
                                            c.linear_attention_layers.size(), c.num_layers));
}

// LFM3's layers over LFM2's (its conv layers and attention layers, full or sliding; its default pattern when
// layer_types is absent), the sliding window, the sandwich norms and the heads' output gate, as Lfm3Config reads them.

// LFM2 as Lfm2Config reads it: conv layers from layer_types (conv, full_attention) or all but full_attn_idxs (all
// attention by default), tie_embedding over tie_word_embeddings, and the MLP's width as Lfm2MLP makes it (2/3, times
// block_ffn_dim_multiplier, rounded up to block_multiple_of: 256 by default).

// time_step_limit, the clamp of a Mamba2 prefill's dt: [min, max] with 0 <= min < max, max finite or infinite (no
// bound: 0 here); (0, inf) when absent.
void parse_time_step_limit(const json& j, ModelConfig& c) {
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

// The Mamba2 sizes every family checks alike, once read, and the convolution's activation (SiLU here).
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

// The mamba_ keys Granite 4 and Falcon-H1 share, with their defaults; each head's width (mamba_d_head, "auto": the
// inner width over the heads) checked against `inner` (named `inner_name`); time_step_limit; the convolution's
// activation (hidden_act).
void parse_mamba_keys(const json& j, ModelConfig& c, int64_t inner, const char* inner_name) {
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
  parse_time_step_limit(j, c);
  check_mamba2(c, get_or<std::string>(j, "hidden_act", "silu"));
}

// Granite 4 as GraniteMoeHybridConfig reads it: mamba layers from layer_types (mamba or linear_attention; attention
// or full_attention; all mamba when absent), their sizes from the mamba_ keys, rope only where
// position_embedding_type is "rope", and the shared MLP beside the experts (or the MLP, without experts).
void parse_granite_hybrid(const json& j, ModelConfig& c) {
  const char* types = has_field(j, "layer_types") ? "layer_types" : "layers_block_type";
  if (has_field(j, types)) {
    for (const auto& type : get_or<std::vector<std::string>>(j, types, {})) {
      check_layer_type(type, {"mamba", "linear_attention", "attention", "full_attention"});
      c.mamba_layers.push_back(type == "mamba" || type == "linear_attention");
    }
  } else {
    c.mamba_layers.assign(std::max<int64_t>(c.num_layers, 0), true);
  }
  if (static_cast<int64_t>(c.mamba_layers.size()) != c.num_layers)
    throw std::invalid_argument(fmt::format("config.json: {} has {} entries for {} layers", types,
                                            c.mamba_layers.size(), c.num_layers));
  parse_mamba_keys(j, c, get_or<int64_t>(j, "mamba_expand", 2) * c.hidden_size, "mamba_expand times hidden_size");
  c.mamba_out_bias = c.mamba_proj_bias;
  if (get_or<std::string>(j, "position_embedding_type", "") != "rope")
    c.rope_layers.assign(std::max<int64_t>(c.num_layers, 0), false);
  const int64_t shared = get_or<int64_t>(j, "shared_intermediate_size", 1024);
  if (c.num_experts > 0)
    c.shared_expert_intermediate_size = shared;
  else
    c.intermediate_size = c.moe_intermediate_size = shared;  // experts as wide as intermediate_size, were there any
}

// A list of `n` numbers under `key`, or `fallback` when absent.
template <size_t n>
std::array<double, n> numbers_or(const json& j, const char* key, std::array<double, n> fallback) {
  if (!has_field(j, key)) return fallback;
  const auto values = get_or<std::vector<double>>(j, key, {});
  if (values.size() != n)
    throw std::invalid_argument(fmt::format("config.json: {} must hold {} numbers, got {}", key, n, values.size()));
  std::copy(values.begin(), values.end(), fallback.begin());
  return fallback;
}

// Falcon-H1 as FalconH1Config reads it: attention and Mamba2 side by side in every layer, the Mamba2 sizes (its inner
// width mamba_d_ssm, 1024 when absent), its gate and norm, and the muP multipliers.
void parse_falcon_h1(const json& j, ModelConfig& c) {
  c.mamba_beside_attention = true;
  const int64_t inner = !j.contains("mamba_d_ssm") ? 1024
                        : j["mamba_d_ssm"].is_null() ? get_or<int64_t>(j, "mamba_expand", 2) * c.hidden_size
                                                     : get_or<int64_t>(j, "mamba_d_ssm", 1024);
  parse_mamba_keys(j, c, inner, "the inner width mamba_d_ssm");
  c.mamba_out_bias = get_or<bool>(j, "projectors_bias", false);
  c.mamba_gate = !get_or<bool>(j, "mamba_rms_norm", false)           ? Mamba2Gate::kGateOnly
                 : get_or<bool>(j, "mamba_norm_before_gate", true) ? Mamba2Gate::kNormThenGate
                                                                     : Mamba2Gate::kGateThenNormFp32Weight;
  c.embedding_multiplier = get_or<double>(j, "embedding_multiplier", 1.0);
  c.lm_head_multiplier = get_or<double>(j, "lm_head_multiplier", 1.0);
  c.attention_in_multiplier = get_or<double>(j, "attention_in_multiplier", 1.0);
  c.attention_out_multiplier = get_or<double>(j, "attention_out_multiplier", 1.0);
  c.key_multiplier = get_or<double>(j, "key_multiplier", 1.0);
  c.ssm_in_multiplier = get_or<double>(j, "ssm_in_multiplier", 1.0);
  c.ssm_out_multiplier = get_or<double>(j, "ssm_out_multiplier", 1.0);
  c.ssm_multipliers = numbers_or<5>(j, "ssm_multipliers", {1, 1, 1, 1, 1});
  c.mlp_multipliers = numbers_or<2>(j, "mlp_multipliers", {1, 1});
}

// Multi-head latent attention as DeepseekV3Config reads it: head_dim is the rotated key's width (qk_rope_head_dim),
// rotated whole (Mistral 4's partial_rotary_factor names the same width as a share of the query's head); q_lora_rank
// null for q_proj directly.
void parse_latent_attention(const json& j, const LatentDefaults& d, ModelConfig& c) {
  c.kv_lora_rank = get_or<int64_t>(j, "kv_lora_rank", d.kv_rank);
  c.q_lora_rank = j.contains("q_lora_rank") ? get_or<int64_t>(j, "q_lora_rank", 0) : d.q_rank;
  c.qk_nope_head_dim = get_or<int64_t>(j, "qk_nope_head_dim", d.nope);
  c.head_dim = get_or<int64_t>(j, "qk_rope_head_dim", d.rope);
  c.v_head_dim = get_or<int64_t>(j, "v_head_dim", d.value);
  c.rope.partial_rotary_factor = 1;
  c.interleaved_rope = d.fixed_layout || get_or<bool>(j, "rope_interleave", true);
  if (d.fixed_layout && c.q_lora_rank == 0)
    throw std::invalid_argument(fmt::format("config.json: {} needs q_lora_rank (its queries always go through it)",
                                            c.model_type));
  if (c.kv_lora_rank < 1 || c.q_lora_rank < 0 || c.qk_nope_head_dim < 1 || c.v_head_dim < 1 || c.head_dim < 2 ||
      c.head_dim % 2 != 0)
    throw std::invalid_argument(fmt::format(
        "config.json: kv_lora_rank {}, q_lora_rank {}, qk_nope_head_dim {}, qk_rope_head_dim {}, v_head_dim {} (all "
        "positive, q_lora_rank 0 or null for none, qk_rope_head_dim even)",
        c.kv_lora_rank, c.q_lora_rank, c.qk_nope_head_dim, c.head_dim, c.v_head_dim));
}

// Nemotron-H's layer types: layers_block_type (or its alias layer_types; mamba and attention as the older names of
// linear_attention and full_attention), else hybrid_override_pattern's letters, else transformers' default.
std::vector<std::string> nemotron_layer_types(const json& j) {
  for (const char* key : {"layers_block_type", "layer_types"}) {
    if (!has_field(j, key)) continue;
    std::vector<std::string> types = get_or<std::vector<std::string>>(j, key, {});
    for (std::string& type : types) {
      if (type == "mamba") type = "linear_attention";
      if (type == "attention") type = "full_attention";
    }
    return types;
  }
  if (!has_field(j, "hybrid_override_pattern")) return {"linear_attention", "moe", "full_attention", "mlp"};
  std::vector<std::string> types;
  for (const char letter : get_or<std::string>(j, "hybrid_override_pattern", "")) {
    switch (letter) {
      case 'M': types.emplace_back("linear_attention"); break;
      case '*': types.emplace_back("full_attention"); break;
      case '-': types.emplace_back("mlp"); break;
      case 'E': types.emplace_back("moe"); break;
      default:
        throw std::invalid_argument(fmt::format(
            "config.json: hybrid_override_pattern has '{}' (M, *, - and E are layer kinds)", std::string(1, letter)));
    }
  }
  return types;
}

// A key under its older name where present (NemotronHConfig's post-init lets it override), else under its name.
template <typename T>
T get_either(const json& j, const char* key, const char* older, T fallback) {
  return get_or<T>(j, older, get_or<T>(j, key, fallback));
}

// Nemotron-H as NemotronHConfig reads it: one block a layer (a Mamba2 mixer, attention without rope or biases, or an
// ungated MLP), the Mamba2 sizes under their names or their older mamba_ ones, dt clamped below at time_step_min, the
// output layer never tied.
void parse_nemotron_h(const json& j, ModelConfig& c) {
  c.mixer_only_layers = true;
  for (const std::string& type : nemotron_layer_types(j)) {
    check_layer_type(type, {"linear_attention", "full_attention", "mlp", "moe"});
    c.mamba_layers.push_back(type == "linear_attention");
    c.mlp_only_layers.push_back(type == "mlp" || type == "moe");
    c.moe_layers.push_back(type == "moe");
  }
  c.ungated_experts = true;
  c.moe_latent_size = get_or<int64_t>(j, "moe_latent_size", 0);
  c.shared_expert_intermediate_size = get_or<int64_t>(j, "moe_shared_expert_intermediate_size", 7688);
  if (c.moe_latent_size < 0 || c.shared_expert_intermediate_size < 1)
    throw std::invalid_argument(fmt::format(
        "config.json: moe_latent_size {} and moe_shared_expert_intermediate_size {} (a width, or null; a width >= 1)",
        c.moe_latent_size, c.shared_expert_intermediate_size));
  c.mamba_heads = get_or<int64_t>(j, "mamba_num_heads", 128);
  c.mamba_head_dim = get_or<int64_t>(j, "mamba_head_dim", 64);
  c.mamba_state_size = get_or<int64_t>(j, "ssm_state_size", 128);
  c.mamba_groups = get_either<int64_t>(j, "n_groups", "mamba_n_groups", 8);
  c.mamba_taps = get_either<int64_t>(j, "conv_kernel", "mamba_d_conv", 4);
  c.mamba_chunk = get_either<int64_t>(j, "chunk_size", "mamba_chunk_size", 128);
  c.mamba_conv_bias = get_either<bool>(j, "use_conv_bias", "mamba_conv_bias", true);
  c.mamba_proj_bias = c.mamba_out_bias = get_or<bool>(j, "use_bias", false);
  c.mamba_dt_min = get_either<double>(j, "time_step_min", "mamba_dt_min", 0.001);
  if (!(c.mamba_dt_min >= 0))
    throw std::invalid_argument(fmt::format("config.json: time_step_min must be >= 0, got {}", c.mamba_dt_min));
  check_mamba2(c, get_or<std::string>(j, "mamba_hidden_act", "silu"));
  c.rope_layers.assign(std::max<int64_t>(c.num_layers, 0), false);
  c.qkv_bias = c.o_bias = false;
  c.tie_word_embeddings = false;
}

// Gemma 4 as Gemma4TextConfig reads it, its __post_init__ included: the full-attention layers' heads
// (per_layer_config as transformers 5 saves it, else global_head_dim and, with attention_k_eq_v,
// num_global_key_value_heads), KV sharing, per-layer inputs, and the last layer always full.

// Whether text tokens attend both ways: use_bidirectional_attention true, or "all" (Gemma 4's "vision" makes only
// image tokens bidirectional, text stays causal).
bool bidirectional_text(const json& j) {
  if (!has_field(j, "use_bidirectional_attention")) return false;
  const json& value = j["use_bidirectional_attention"];
  if (value.is_string()) return value.get<std::string>() != "vision";
  return get_or<bool>(j, "use_bidirectional_attention", false);
}

}  // namespace

ModelConfig ModelConfig::from_json(const std::string& text) {
  json j;
  try {
    j = json::parse(quote_special_floats(text));
  } catch (const json::exception& e) {
    throw std::invalid_argument(fmt::format("config.json is not valid JSON: {}", e.what()));
  }
  if (!j.is_object()) throw std::invalid_argument("config.json is not a JSON object");
  ModelConfig c;
  c.model_type = require<std::string>(j, "model_type");
  if (const char* text_type = multimodal_text_type(c.model_type)) {
    // A multimodal checkpoint: its text model alone, as text benchmarks score it (the vision tower is not loaded).
    if (j.contains("quantization_config") && !j["quantization_config"].is_null())
      throw std::invalid_argument("config.json: 'quantization_config' is not supported");
    json text = j.contains("text_config") ? j["text_config"] : json::object();
    if (!text.is_object()) throw std::invalid_argument("config.json: 'text_config' is not a JSON object");
    if (!text.contains("model_type")) text["model_type"] = text_type;
    if (multimodal_text_type(text["model_type"].get<std::string>()) != nullptr)
      throw std::invalid_argument("config.json: text_config is itself multimodal");
    if (j.contains("tie_word_embeddings")) text["tie_word_embeddings"] = j["tie_word_embeddings"];
    try {
      return from_json(text.dump());
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("{} text_config: {}", c.model_type, e.what()));
    }
  }
  const ModelFamily& family = model_family(c.model_type);
  if (family.mamba2 == Mamba2Keys::kNemotronH)  // its layer kinds give the number of layers
    j["num_hidden_layers"] = static_cast<int64_t>(nemotron_layer_types(j).size());
  c.fp8_block = parse_block_fp8(j);
  for (const char* key : {"quantization_config", "vision_config"}) {
    if (std::string(key) == "quantization_config" && (accepted_quantization(j, family) || c.fp8_block[0] > 0))
      continue;
    if (j.contains(key) && !j[key].is_null())
      throw std::invalid_argument(fmt::format("config.json: '{}' is not supported (a plain {} text model is)", key,
                                              c.model_type));
  }
  c.attention_sinks = family.attention_sinks;
  c.sinks_on_sliding_only = family.sinks_on_sliding_only;
  if (family.value_head_dim_key != nullptr)
    c.value_head_dim = get_or<int64_t>(j, family.value_head_dim_key, family.default_value_head_dim);
  if (family.value_scale_key != nullptr)  // null: unscaled
    c.value_multiplier = j.contains(family.value_scale_key) && j[family.value_scale_key].is_null()
                             ? 1.0
                             : get_or<double>(j, family.value_scale_key, family.default_value_scale);
  if (bidirectional_text(j))
    throw std::invalid_argument("config.json: 'use_bidirectional_attention' is not supported (causal models are)");

  const std::string activation =
      get_or<std::string>(j, family.activation_key, std::string(to_string(family.default_activation)));
  c.activation = family.gelu_means_tanh && activation == "gelu" ? Activation::kGeluTanh : parse_activation(activation);

  const SizeKeys& keys = family.sizes;
  c.vocab_size = require<int64_t>(j, "vocab_size");
  c.hidden_size = size_field(j, keys.hidden, "hidden_size");
  const bool intermediate_given =
      keys.intermediate != nullptr && (has_field(j, keys.intermediate) || has_field(j, "intermediate_size"));
  c.intermediate_size = keys.intermediate == nullptr ? 0
                        : keys.default_intermediate_factor > 0 && !intermediate_given
                            ? keys.default_intermediate_factor * c.hidden_size
                            : size_field(j, keys.intermediate, "intermediate_size");
  c.num_layers = size_field(j, keys.layers, "num_hidden_layers");
  c.num_heads = size_field(j, keys.heads, "num_attention_heads");
  c.num_kv_heads = get_or<int64_t>(j, "num_key_value_heads", c.num_heads);
  const int64_t default_head_dim =
      family.default_head_dim > 0 ? family.default_head_dim : (c.num_heads > 0 ? c.hidden_size / c.num_heads : 0);
  c.head_dim = family.head_dim_from_heads ? default_head_dim : get_or<int64_t>(j, "head_dim", default_head_dim);
  c.max_position_embeddings = get_or<int64_t>(
      j, keys.positions, get_or<int64_t>(j, "max_position_embeddings", c.max_position_embeddings));
  c.rms_norm_eps = get_or<double>(j, family.eps_key, family.default_eps);
  c.tie_word_embeddings = get_or<bool>(j, "tie_word_embeddings", family.tied_by_default);
  parse_rope(j, family, c);

  const bool attention_bias = get_or<bool>(j, "attention_bias", family.attention_bias_default);
  c.qkv_bias = family.qkv_bias || attention_bias;
  c.o_bias = family.o_bias_key != nullptr ? get_or<bool>(j, family.o_bias_key, false)
                                          : family.attention_bias_on_o && attention_bias;
  c.mlp_bias = family.reads_mlp_bias && get_or<bool>(j, "mlp_bias", false);
  if (family.all_bias_key != nullptr) c.qkv_bias = c.o_bias = c.mlp_bias = get_or<bool>(j, family.all_bias_key, family.all_bias_default);
  if (family.always_biased) c.qkv_bias = c.o_bias = c.mlp_bias = true;
  if (family.always_mlp_bias) c.mlp_bias = true;
  c.lm_head_bias = family.output_layer_bias || (family.all_bias_on_output && c.mlp_bias);
  if (family.position_embed != nullptr) parse_gpt2_attention(j, c);
  if (family.parallel_block && get_or<bool>(j, "qk_layernorm", false))
    throw std::invalid_argument("config.json: 'qk_layernorm' is not supported");
  c.parallel_block = family.parallel_block ||
                     (family.parallel_residual_key != nullptr && get_or<bool>(j, family.parallel_residual_key, true));
  c.layer_norm = family.layer_norm;
  c.gated_mlp = family.mlp_up == nullptr;
  c.qk_norm = family.qk_norm || (family.qk_norm_key != nullptr && get_or<bool>(j, family.qk_norm_key, false));
  c.qk_norm_full_width = family.qk_norm_full_width;
  c.qk_norm_after_rope = family.qk_norm_after_rope;
  c.qk_norm_weight_per_head = family.qk_norm_weight_per_head;
  c.norm_bias = !family.norms_without_bias;
  if (family.logit_scale_key != nullptr)
    c.lm_head_multiplier = get_or<double>(j, family.logit_scale_key, family.default_logit_scale);
  c.interleaved_rope = family.interleaved_rope;
  c.output_norms_only = family.output_norms_only;
  c.norm_in_fp32 = family.norm_in_fp32;
  c.fused_projections = family.fused_projections;
  c.norm_plus_one = family.norm_plus_one;
  c.scale_embeddings = family.scale_embeddings;
  c.sandwich_norms = family.sandwich_norms;
  if (family.output_gate_proj != nullptr) {
    bool per_head = false;
    if (family.per_head_gate_key != nullptr) {
      const json gating = j.contains(family.per_head_gate_key) ? j[family.per_head_gate_key] : json(true);
      per_head = gating.is_boolean() ? gating.get<bool>() : gating.is_string() && gating.get<std::string>() == "per-head";
    }
    c.attention_head_gate = per_head;
    c.attention_output_gate = !per_head;
    c.attention_gate_softplus = family.softplus_gate;
  }
  if (family.layer_heads_key != nullptr && has_field(j, family.layer_heads_key)) {
    c.layer_heads = get_or<std::vector<int64_t>>(j, family.layer_heads_key, {});
    if (static_cast<int64_t>(c.layer_heads.size()) != c.num_layers)
      throw std::invalid_argument(fmt::format("config.json: {} has {} entries for {} layers", family.layer_heads_key,
                                              c.layer_heads.size(), c.num_layers));
  }
  if (family.refused_if_true != nullptr && get_or<bool>(j, family.refused_if_true, false))
    throw std::invalid_argument(fmt::format("config.json: '{}' true is not supported (transformers does not run it)",
                                            family.refused_if_true));
  if (family.sqrt_hidden_embedding_key != nullptr && get_or<bool>(j, family.sqrt_hidden_embedding_key, false))
    c.embedding_multiplier = std::sqrt(static_cast<double>(c.hidden_size));
  if (family.reads_multipliers) {
    c.attention_multiplier = get_or<double>(j, "attention_multiplier", 1.0);
    c.embedding_multiplier = get_or<double>(j, "embedding_multiplier", 1.0);
    c.residual_multiplier = get_or<double>(j, "residual_multiplier", 1.0);
    c.logits_scaling = get_or<double>(j, "logits_scaling", 1.0);
  }
  if (family.experts.present) parse_experts(j, family.experts, c);
  const AlternatingWindows& windows = family.windows;
  if (windows.present) {
    c.query_pre_attn_scalar = get_or<double>(j, "query_pre_attn_scalar", family.default_query_pre_attn_scalar);
    c.attn_softcap = optional_field(j, "attn_logit_softcapping", windows.default_attn_softcap);
    c.final_softcap = optional_field(j, "final_logit_softcapping", windows.default_final_softcap);
    c.sliding_window = optional_field<int64_t>(j, "sliding_window", windows.default_window);
    const bool pattern_text = windows.period_key != nullptr && j.contains(windows.period_key) &&
                              j[windows.period_key].is_string();
    const int64_t period = windows.period_key != nullptr && !pattern_text
                               ? get_or<int64_t>(j, windows.period_key, windows.period)
                               : windows.period;
    c.layer_kinds = pattern_text && !has_field(j, "layer_types")
                        ? pattern_layer_types(j[windows.period_key].get<std::string>(), c.num_layers)
                        : parse_layer_types(j, c.num_layers, period, windows.first_layer_full);
    if (family.window_less_one_key != nullptr && has_field(j, family.window_less_one_key))
      c.sliding_window = get_or<int64_t>(j, family.window_less_one_key, 0) + 1;
    if (family.sliding_kv_heads_factor != 1) {
      c.layer_kv_heads.assign(c.num_layers, 0);
      for (int64_t i = 0; i < c.num_layers; ++i)
        if (c.layer_kinds[i] == LayerKind::kSlidingAttention) c.layer_kv_heads[i] = family.sliding_kv_heads_factor * c.num_kv_heads;
    }
    if (family.rope_only_on_sliding && (c.sliding_window > 0 || family.rope_needs_window)) {  // full layers: no rope
      for (const LayerKind kind : c.layer_kinds)
        c.rope_layers.push_back(kind == LayerKind::kSlidingAttention && c.sliding_window > 0);
    }
  } else if (family.always_windowed || get_or<bool>(j, "use_sliding_window", false)) {
    c.sliding_window = get_or<int64_t>(j, "sliding_window", 0);
  }
  if (family.nope_layers) parse_nope_layers(j, c);
  if (family.read_keys != nullptr) family.read_keys(j, c);
  if (family.deltanet != DeltaNetLayout::kNone) parse_gated_deltanet(j, c, family.deltanet);
  if (family.mamba2 == Mamba2Keys::kGranite) parse_granite_hybrid(j, c);
  if (family.mamba2 == Mamba2Keys::kNemotronH) parse_nemotron_h(j, c);
  if (family.mamba2 == Mamba2Keys::kFalconH1) parse_falcon_h1(j, c);
  if (family.latent.kv_rank > 0) parse_latent_attention(j, family.latent, c);
  if (family.default_index_topk > 0) {
    c.dense_attention_limit = get_or<int64_t>(j, "index_topk", family.default_index_topk);
    if (c.dense_attention_limit < 1)
      throw std::invalid_argument(fmt::format("config.json: index_topk must be >= 1, got {}", c.dense_attention_limit));
  }
  if (family.output_vocab_key != nullptr) c.output_vocab_size = get_or<int64_t>(j, family.output_vocab_key, 0);
  c.validate();
  return c;
}

ModelConfig ModelConfig::from_file(const std::string& path) {
  const std::string file = std::filesystem::is_directory(path) ? path + "/config.json" : path;
  std::ifstream in(file);
  if (!in) throw FileNotFound(fmt::format("cannot read model config '{}'", file));
  std::stringstream text;
  text << in.rdbuf();
  try {
    return from_json(text.str());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: {}", file, e.what()));
  }
}

void ModelConfig::validate() const {
  auto positive = [](int64_t value, const char* name) {
    if (value <= 0) throw std::invalid_argument(fmt::format("config: {} must be positive, got {}", name, value));
  };
  positive(vocab_size, "vocab_size");
  positive(hidden_size, "hidden_size");
  bool dense_layers = false;
  for (int64_t i = 0; i < num_layers; ++i) dense_layers = dense_layers || !is_moe_layer(i);
  if (intermediate_size != 0 || dense_layers) positive(intermediate_size, "intermediate_size");
  positive(num_layers, "num_hidden_layers");
  positive(num_heads, "num_attention_heads");
  positive(num_kv_heads, "num_key_value_heads");
  positive(head_dim, "head_dim");
  positive(max_position_embeddings, "max_position_embeddings");
  if (num_heads % num_kv_heads != 0)
    throw std::invalid_argument(fmt::format("config: num_attention_heads ({}) is not a multiple of "
                                            "num_key_value_heads ({})", num_heads, num_kv_heads));
  if (head_dim % 2 != 0) throw std::invalid_argument(fmt::format("config: head_dim ({}) must be even", head_dim));
  for (const RopeConfig* r : {&rope, sliding_rope ? &*sliding_rope : &rope}) {
    if (r->theta <= 0 || r->factor <= 0 || r->attention_factor <= 0)
      throw std::invalid_argument("config: rope_theta, the rope factor and attention_factor must be positive");
    if (!(r->partial_rotary_factor > 0 && r->partial_rotary_factor <= 1))  // checked before it sizes anything
      throw std::invalid_argument(
          fmt::format("config: partial_rotary_factor must be in (0, 1], got {}", r->partial_rotary_factor));
    const int64_t rotary = r->rotary_dim(head_dim);
    if (rotary <= 0 || rotary > head_dim || rotary % 2 != 0)
      throw std::invalid_argument(fmt::format("config: partial_rotary_factor {} rotates {} of {} dimensions (must be "
                                              "even and at least 2)", r->partial_rotary_factor, rotary, head_dim));
    if (r->llama4_scaling_beta != 0 && r->original_max_position_embeddings < 1)
      throw std::invalid_argument("config: llama_4_scaling_beta needs original_max_position_embeddings >= 1");
    if (r->type == RopeType::kYarn && r->original_max_position_embeddings < 1)
      throw std::invalid_argument("config: yarn needs original_max_position_embeddings >= 1");
    if (r->type != RopeType::kLongRope) continue;
    using Factors = std::pair<const char*, const std::vector<double>*>;
    for (const auto& [key, factors] : {Factors{"short_factor", &r->short_factor}, Factors{"long_factor", &r->long_factor}}) {
      if (static_cast<int64_t>(factors->size()) != rotary / 2)
        throw std::invalid_argument(fmt::format("config: rope {} has {} entries, longrope needs rotary_dim / 2 = {}",
                                                key, factors->size(), rotary / 2));
    }
    if (r->original_max_position_embeddings < 1)
      throw std::invalid_argument("config: longrope needs original_max_position_embeddings >= 1");
  }
  for (const std::vector<int64_t>* sizes : {&layer_head_dims, &layer_kv_heads, &layer_heads}) {
    if (!sizes->empty() && static_cast<int64_t>(sizes->size()) != num_layers)
      throw std::invalid_argument("config: the per-layer head sizes do not cover every layer");
  }
  for (int64_t i = 0; i < num_layers; ++i) {
    if (value_head_dim < 0 || value_head_dim > layer_head_dim(i))
      throw std::invalid_argument(fmt::format("config: value heads of {} values are wider than layer {}'s heads of {}",
                                              value_head_dim, i, layer_head_dim(i)));
    const int64_t dim = layer_head_dim(i), kv = layer_kv_head_count(i), heads = layer_head_count(i);
    if (dim <= 0 || dim % 2 != 0 || kv <= 0 || heads % kv != 0)
      throw std::invalid_argument(fmt::format("config: layer {} has heads of {} values and {} key-value heads (the "
                                              "size must be even, the heads a multiple of them)", i, dim, kv));
  }
  if (per_layer_input_size < 0 || (per_layer_input_size > 0 && per_layer_vocab < vocab_size))
    throw std::invalid_argument(fmt::format(
        "config: per-layer inputs of {} values from a table of {} tokens for a vocabulary of {} (ids past the table "
        "would have none)", per_layer_input_size, per_layer_vocab, vocab_size));
  if (!layer_kinds.empty() && static_cast<int64_t>(layer_kinds.size()) != num_layers)
    throw std::invalid_argument(fmt::format("config: layer_types has {} entries for {} layers", layer_kinds.size(),
                                            num_layers));
  if (sliding_window < 0 || attn_softcap < 0 || final_softcap < 0 || query_pre_attn_scalar < 0 ||
      attention_multiplier < 0)
    throw std::invalid_argument(
        "config: sliding_window, the soft-caps, query_pre_attn_scalar and attention_multiplier must not be negative");
  if (!(logits_scaling != 0)) throw std::invalid_argument("config: logits_scaling must not be 0");
  if (activation == Activation::kXielu && (gated_mlp || num_experts > 0))
    throw std::invalid_argument("config: hidden_act xielu (learned per layer) is supported in ungated MLPs (apertus)");
  if (num_experts > 0 && (experts_per_token < 1 || experts_per_token > num_experts || moe_intermediate_size <= 0))
    throw std::invalid_argument(fmt::format("config: {} experts per token of {} experts of size {} is not a mixture",
                                            experts_per_token, num_experts, moe_intermediate_size));
  for (int64_t i = 0; i < num_layers && num_experts > 0 && !layer_experts_per_token.empty(); ++i)
    if (layer_top_k(i) < 1 || layer_top_k(i) > num_experts)
      throw std::invalid_argument(fmt::format("config: layer {} routes each token to {} of {} experts", i,
                                              layer_top_k(i), num_experts));
  if (num_experts > 0 && expert_groups > 1) {
    const int64_t group_size = num_experts / std::max<int64_t>(expert_groups, 1);
    if (num_experts % expert_groups != 0 || group_size < 2 || expert_groups_chosen < 1 ||
        expert_groups_chosen > expert_groups || expert_groups_chosen * group_size < experts_per_token)
      throw std::invalid_argument(fmt::format(
          "config: {} experts in n_group {} with topk_group {} cannot give {} experts per token (groups must split "
          "the experts evenly, at least two each, and the chosen groups hold enough)",
          num_experts, expert_groups, expert_groups_chosen, experts_per_token));
  }
  if (output_vocab_size < 0 || output_vocab_size > vocab_size)
    throw std::invalid_argument(fmt::format("config: output_vocab_size {} must be in [1, vocab_size {}]",
                                            output_vocab_size, vocab_size));
  if (output_vocab_size > 0 && output_vocab_size < vocab_size && tie_word_embeddings)
    throw std::invalid_argument("config: a pruned output layer (output_vocab_size) tied to the embeddings is not "
                                "supported; its checkpoints are untied");
  if (num_experts > 0 && !(std::isfinite(routed_scaling_factor) && routing_norm_floor >= 0))
    throw std::invalid_argument("config: routed_scaling_factor must be finite and moe_norm_min not negative");
  if (!rope_layers.empty() && static_cast<int64_t>(rope_layers.size()) != num_layers)
    throw std::invalid_argument("config: the no-rope layer list does not cover every layer");
  if (!moe_layers.empty() && static_cast<int64_t>(moe_layers.size()) != num_layers)
    throw std::invalid_argument("config: the MoE layer list does not cover every layer");
  const int64_t first_shared = num_layers - kv_shared_layers;
  if (kv_shared_layers < 0 || first_shared < 1)
    throw std::invalid_argument(fmt::format("config: {} KV-shared layers of {} leave no layer computing keys and values",
                                            kv_shared_layers, num_layers));
  for (int64_t i = first_shared; i < num_layers; ++i) {
    bool found = false;
    for (int64_t j = 0; j < first_shared && !found; ++j) found = (layer_window(j) > 0) == (layer_window(i) > 0);
    if (!found)
      throw std::invalid_argument(fmt::format("config: KV-shared layer {} has no earlier layer of its kind to read", i));
  }
}

double ModelConfig::attention_scale() const {
  if (attention_multiplier > 0) return attention_multiplier;
  return query_pre_attn_scalar > 0 ? 1.0 / std::sqrt(query_pre_attn_scalar) : 0.0;
}

double ModelConfig::layer_attention_scale(int64_t layer) const {
  if (!scale_by_inverse_layer) return attention_scale();
  const double scale = attention_scale() > 0 ? attention_scale() : 1.0 / std::sqrt(static_cast<double>(head_dim));
  return scale / static_cast<double>(layer + 1);
}

int64_t ModelConfig::layer_window(int64_t layer) const {
  return layer_kinds.empty() || layer_kinds.at(layer) == LayerKind::kSlidingAttention ? sliding_window : 0;
}

bool ModelConfig::has_full_attention() const {
  if (sliding_window == 0) return true;
  return std::find(layer_kinds.begin(), layer_kinds.end(), LayerKind::kFullAttention) != layer_kinds.end();
}

bool ModelConfig::has_window() const {
  if (sliding_window == 0) return false;
  return layer_kinds.empty() ||
         std::find(layer_kinds.begin(), layer_kinds.end(), LayerKind::kSlidingAttention) != layer_kinds.end();
}

namespace {

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

json optional_json(double value) { return value == 0 ? json() : json(value); }

}  // namespace

namespace {

// The MoE keys as parse_experts reads them back, under the family's names; also with none (num_experts 0), which
// reads back as none, not as the default.
void write_experts(json& j, const ExpertTraits& e, const ModelConfig& c) {
  j[e.experts_key != nullptr ? e.experts_key : "num_local_experts"] = c.num_experts;
  if (c.layer_experts_per_token.empty())
    j[e.per_token_key] = c.experts_per_token;
  else
    j[e.per_token_key] = c.layer_experts_per_token;
  j["moe_intermediate_size"] = c.moe_intermediate_size;
  j["norm_topk_prob"] = c.norm_topk_prob;
  if (e.correction_bias_key != nullptr) j[e.correction_bias_key] = c.expert_correction_bias;
  if (e.grouped) {
    j["n_group"] = c.expert_groups;
    j["topk_group"] = c.expert_groups_chosen;
  }
  if (e.norm_floor_key != nullptr) j[e.norm_floor_key] = c.routing_norm_floor;
  if (e.scaled) j[e.scaling_key] = c.routed_scaling_factor;
  if (e.logit_softcap_key != nullptr) j[e.logit_softcap_key] = c.router_logit_softcap;
  if (e.default_shared_size > 0) j["shared_expert_intermediate_size"] = c.shared_expert_intermediate_size;
  if (e.shared_count_key != nullptr)
    j[e.shared_count_key] = c.moe_intermediate_size > 0 ? c.shared_expert_intermediate_size / c.moe_intermediate_size : 0;
  std::vector<int64_t> moe, dense;
  for (int64_t i = 0; i < c.num_layers; ++i) (c.is_moe_layer(i) || c.moe_layers.empty() ? moe : dense).push_back(i);
  switch (e.layers) {
    case MoeLayerRule::kAll:
      break;
    case MoeLayerRule::kSparseStep:
      j["decoder_sparse_step"] = 1;
      j["mlp_only_layers"] = dense;
      break;
    case MoeLayerRule::kFirstDense:  // the rule's layers: all MoE from the first one on
      j[e.first_dense_key] = moe.empty() ? c.num_layers : moe.front();
      break;
    case MoeLayerRule::kMlpLayerTypes: {
      json types = json::array();
      for (int64_t i = 0; i < c.num_layers; ++i) types.push_back(c.is_moe_layer(i) ? "sparse" : "dense");
      j["mlp_layer_types"] = types;
      break;
    }
    case MoeLayerRule::kStartEndEvery: {  // the rule's layers: every k-th from the first to the last, k their gcd
      int64_t every = 0;
      for (const int64_t i : moe) every = std::gcd(every, i + 1);
      j["moe_layer_start_index"] = moe.empty() ? c.num_layers : moe.front();
      j["moe_layer_end_index"] = moe.empty() ? c.num_layers : moe.back();
      j["moe_layer_interval"] = std::max<int64_t>(every, 1);
      break;
    }
  }
}

}  // namespace

std::string ModelConfig::to_json() const {
  const json rope_parameters = rope_json(rope);
  json j = {{"model_type", model_type},
            {"vocab_size", vocab_size},
            {"hidden_size", hidden_size},
            {"intermediate_size", intermediate_size},
            {"num_hidden_layers", num_layers},
            {"num_attention_heads", num_heads},
            {"num_key_value_heads", num_kv_heads},
            {"head_dim", head_dim},
            {"max_position_embeddings", max_position_embeddings},
            {"rms_norm_eps", rms_norm_eps},
            {"tie_word_embeddings", tie_word_embeddings},
            {"hidden_act", std::string(to_string(activation))},
            {"rope_theta", rope.theta},
            {"rope_parameters", rope_parameters},
            {"rope_scaling", rope.type == RopeType::kDefault ? json() : rope_parameters}};
  const ModelFamily& family = model_family(model_type);
  if (family.query_scale_by_position)  // both keys written even at 0: transformers requires them
    for (const char* key : {"rope_parameters", "rope_scaling"})
      if (j[key].is_object())
        j[key].update({{"llama_4_scaling_beta", rope.llama4_scaling_beta},
                       {"original_max_position_embeddings", rope.original_max_position_embeddings}});
  const SizeKeys& keys = family.sizes;
  j[keys.hidden] = hidden_size;
  if (keys.intermediate == nullptr)
    j.erase("intermediate_size");
  else
    j[keys.intermediate] = intermediate_size;
  j[keys.layers] = num_layers;
  j[keys.heads] = num_heads;
  j[keys.positions] = max_position_embeddings;
  if (learned_positions) {
    j["scale_attn_weights"] = attention_multiplier == 0;
    j["scale_attn_by_inverse_layer_idx"] = scale_by_inverse_layer;
  }
  j[family.activation_key] = std::string(to_string(activation));
  if (family.attention_bias_on_o || family.o_bias_key != nullptr) j["attention_bias"] = qkv_bias;
  if (family.o_bias_key != nullptr) j[family.o_bias_key] = o_bias;
  j[family.eps_key] = rms_norm_eps;
  if (family.all_bias_key != nullptr) j[family.all_bias_key] = qkv_bias;
  if (family.parallel_residual_key != nullptr) j[family.parallel_residual_key] = parallel_block;
  if (family.default_partial_rotary != 1.0 && family.partial_rotary_key != nullptr)
    j[family.partial_rotary_key] = rope.partial_rotary_factor;
  if (family.reads_mlp_bias) j["mlp_bias"] = mlp_bias;
  if (family.rope_keys_at_top_level) {  // transformers reads these two from the top level
    j["original_max_position_embeddings"] = rope.original_max_position_embeddings;
    j["partial_rotary_factor"] = rope.partial_rotary_factor;
  }
  if (family.sqrt_hidden_embedding_key != nullptr) j[family.sqrt_hidden_embedding_key] = embedding_multiplier != 1.0;
  if (family.logit_scale_key != nullptr) j[family.logit_scale_key] = lm_head_multiplier;
  if (family.value_head_dim_key != nullptr) j[family.value_head_dim_key] = value_head_dim;
  if (family.value_scale_key != nullptr) j[family.value_scale_key] = value_multiplier;
  if (family.per_head_gate_key != nullptr) j[family.per_head_gate_key] = attention_head_gate;
  if (family.layer_heads_key != nullptr && !layer_heads.empty()) j[family.layer_heads_key] = layer_heads;
  if (family.qk_norm_key != nullptr) j[family.qk_norm_key] = qk_norm;
  if (family.reads_multipliers) {
    j["attention_multiplier"] = attention_multiplier;
    j["embedding_multiplier"] = embedding_multiplier;
    j["residual_multiplier"] = residual_multiplier;
    j["logits_scaling"] = logits_scaling;
  }
  // A family whose window has a default writes "none" (null) too, which would otherwise read back as the default.
  if (sliding_window > 0 || !layer_kinds.empty() || family.windows.present)
    j["sliding_window"] = optional_json(sliding_window);
  if (!family.always_windowed && !family.windows.present) j["use_sliding_window"] = sliding_window > 0;
  if (family.nope_layers) {
    json uses_rope = json::array();
    for (int64_t i = 0; i < num_layers; ++i) uses_rope.push_back(layer_uses_rope(i) ? 1 : 0);
    j["no_rope_layers"] = uses_rope;
    json types = json::array();
    for (LayerKind kind : layer_kinds) types.push_back(std::string(to_string(kind)));
    if (!layer_kinds.empty()) j["layer_types"] = types;
  }
  if (family.windows.present) {
    j["query_pre_attn_scalar"] = query_pre_attn_scalar;
    j["attn_logit_softcapping"] = optional_json(attn_softcap);
    j["final_logit_softcapping"] = optional_json(final_softcap);
    json types = json::array();
    for (LayerKind kind : layer_kinds) types.push_back(std::string(to_string(kind)));
    j["layer_types"] = types;
  }
  if (family.experts.clamped_swiglu) {
    j["swiglu_alpha"] = swiglu_alpha;
    j["swiglu_limit"] = swiglu_limit;
  }
  if (family.experts.present) write_experts(j, family.experts, *this);
  if (latent_attention())
    j.update({{"kv_lora_rank", kv_lora_rank}, {"q_lora_rank", q_lora_rank > 0 ? json(q_lora_rank) : json()},
              {"qk_nope_head_dim", qk_nope_head_dim}, {"qk_rope_head_dim", head_dim}, {"v_head_dim", v_head_dim},
              {"rope_interleave", interleaved_rope}});
  if (dense_attention_limit > 0) j["index_topk"] = dense_attention_limit;
  if (family.output_vocab_key != nullptr)
    j[family.output_vocab_key] = output_vocab_size > 0 ? json(output_vocab_size) : json();
  if (family.deltanet != DeltaNetLayout::kNone) {
    j.update({{"linear_num_key_heads", linear_key_heads}, {"linear_num_value_heads", linear_value_heads},
              {"linear_key_head_dim", linear_key_head_dim}, {"linear_value_head_dim", linear_value_head_dim},
              {"linear_conv_kernel_dim", linear_conv_taps}});
    if (family.deltanet == DeltaNetLayout::kOlmoHybrid) {
      j["linear_allow_neg_eigval"] = linear_beta_scale == 2;
      if (!rope_layers.empty() && std::none_of(rope_layers.begin(), rope_layers.end(), [](bool r) { return r; }))
        j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", nullptr}};
    }
    json types = json::array();
    for (int64_t i = 0; i < num_layers; ++i) types.push_back(is_linear_attention(i) ? "linear_attention" : "full_attention");
    j["layer_types"] = types;
  }
  if (family.mamba2 == Mamba2Keys::kGranite) {
    j.update({{"mamba_n_heads", mamba_heads}, {"mamba_d_head", mamba_head_dim}, {"mamba_n_groups", mamba_groups},
              {"mamba_d_state", mamba_state_size}, {"mamba_d_conv", mamba_taps},
              {"mamba_expand", mamba_heads * mamba_head_dim / hidden_size}, {"mamba_chunk_size", mamba_chunk},
              {"mamba_conv_bias", mamba_conv_bias}, {"mamba_proj_bias", mamba_proj_bias},
              {"time_step_limit", {mamba_dt_min, mamba_dt_max > 0 ? json(mamba_dt_max) : json{{"__float__", "Infinity"}}}},
              {"shared_intermediate_size", num_experts > 0 ? shared_expert_intermediate_size : intermediate_size}});
    const bool rope_anywhere = rope_layers.empty() || std::any_of(rope_layers.begin(), rope_layers.end(), [](bool r) { return r; });
    j["position_embedding_type"] = rope_anywhere ? "rope" : "nope";
    json types = json::array();
    for (int64_t i = 0; i < num_layers; ++i) types.push_back(is_mamba(i) ? "mamba" : "attention");
    j["layer_types"] = types;
  }
  if (family.mamba2 == Mamba2Keys::kNemotronH) {
    j.update({{"mamba_num_heads", mamba_heads}, {"mamba_head_dim", mamba_head_dim}, {"ssm_state_size", mamba_state_size},
              {"n_groups", mamba_groups}, {"conv_kernel", mamba_taps}, {"chunk_size", mamba_chunk},
              {"use_conv_bias", mamba_conv_bias}, {"use_bias", mamba_proj_bias}, {"time_step_min", mamba_dt_min},
              {"mamba_hidden_act", "silu"}});
    json types = json::array();
    for (int64_t i = 0; i < num_layers; ++i)
      types.push_back(is_mamba(i) ? "linear_attention" : is_moe_layer(i) ? "moe" : is_mlp_only(i) ? "mlp" : "full_attention");
    j["layers_block_type"] = types;
    j["moe_latent_size"] = moe_latent_size > 0 ? json(moe_latent_size) : json();
    j["moe_shared_expert_intermediate_size"] = shared_expert_intermediate_size;
  }
  if (family.mamba2 == Mamba2Keys::kFalconH1) {
    j.update({{"mamba_n_heads", mamba_heads}, {"mamba_d_head", mamba_head_dim}, {"mamba_n_groups", mamba_groups},
              {"mamba_d_state", mamba_state_size}, {"mamba_d_conv", mamba_taps},
              {"mamba_d_ssm", mamba_heads * mamba_head_dim}, {"mamba_chunk_size", mamba_chunk},
              {"mamba_conv_bias", mamba_conv_bias}, {"mamba_proj_bias", mamba_proj_bias},
              {"projectors_bias", mamba_out_bias}, {"mamba_rms_norm", mamba_gate != Mamba2Gate::kGateOnly},
              {"mamba_norm_before_gate", mamba_gate == Mamba2Gate::kNormThenGate},
              {"time_step_limit", {mamba_dt_min, mamba_dt_max > 0 ? json(mamba_dt_max) : json{{"__float__", "Infinity"}}}},
              {"embedding_multiplier", embedding_multiplier}, {"lm_head_multiplier", lm_head_multiplier},
              {"attention_in_multiplier", attention_in_multiplier}, {"attention_out_multiplier", attention_out_multiplier},
              {"key_multiplier", key_multiplier}, {"ssm_in_multiplier", ssm_in_multiplier},
              {"ssm_out_multiplier", ssm_out_multiplier}, {"ssm_multipliers", ssm_multipliers},
              {"mlp_multipliers", mlp_multipliers}});
  }
  if (fp8_block[0] > 0)
    j["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", fp8_block}, {"fmt", "e4m3"},
                                {"activation_scheme", "dynamic"}};
  if (sliding_rope) {
    j["rope_parameters"] = {{"full_attention", rope_parameters}, {"sliding_attention", rope_json(*sliding_rope)}};
    j["rope_scaling"] = nullptr;
  }
  if (family.write_keys != nullptr) family.write_keys(*this, j);
  return j.dump(2);
}

namespace {

// A shape's sizes as config.json keys; the family traits come from from_json, as for a checkpoint.
json shape(const char* model_type, int64_t vocab, int64_t hidden, int64_t intermediate, int64_t layers, int64_t heads,
           int64_t kv_heads, int64_t head_dim, int64_t max_positions) {
  return {{"model_type", model_type}, {"vocab_size", vocab},          {"hidden_size", hidden},
          {"intermediate_size", intermediate}, {"num_hidden_layers", layers}, {"num_attention_heads", heads},
          {"num_key_value_heads", kv_heads},  {"head_dim", head_dim},     {"max_position_embeddings", max_positions},
          {"rms_norm_eps", 1e-5}};
}

// Gemma 2 and 3 keys: windows of `window` tokens on all but every `period`-th layer, the query scale of the head.
void gemma_keys(json& j, const char* model_type, int64_t window, int64_t period) {
  j.update({{"model_type", model_type}, {"rms_norm_eps", 1e-6}, {"sliding_window", window},
            {"sliding_window_pattern", period}, {"query_pre_attn_scalar", j["head_dim"]}});
}

// Qwen3 MoE keys: every layer a mixture with renormalized routing weights.
void qwen3_moe_keys(json& j, int64_t experts, int64_t per_token, int64_t expert_size) {
  j.update({{"model_type", "qwen3_moe"}, {"rms_norm_eps", 1e-6}, {"tie_word_embeddings", false}, {"num_experts", experts},
            {"num_experts_per_tok", per_token}, {"moe_intermediate_size", expert_size}, {"norm_topk_prob", true}});
}

// Phi-3 keys: longrope from `original` positions on (factors shaped like the released ones: near 1 when short,
// growing with the wavelength when long), a share of each head rotated.
void phi3_keys(json& j, int64_t original, double partial_rotary_factor) {
  const auto rotary = static_cast<int64_t>(j["head_dim"].get<double>() * partial_rotary_factor);
  std::vector<double> short_factor, long_factor;
  for (int64_t i = 0; i < rotary / 2; ++i) {
    const double x = static_cast<double>(i) / static_cast<double>(rotary / 2);
    short_factor.push_back(1.0 + 0.1 * x);
    long_factor.push_back(1.0 + 30.0 * x * x);
  }
  j.update({{"model_type", "phi3"}, {"tie_word_embeddings", false}, {"original_max_position_embeddings", original},
            {"partial_rotary_factor", partial_rotary_factor},
            {"rope_scaling", {{"type", "longrope"}, {"short_factor", short_factor}, {"long_factor", long_factor}}}});
}

// Gemma 4 keys: `sliding` sliding layers to one full, repeated; full layers with heads of `global_head_dim`; the
// last `shared` layers reading earlier layers' keys and values with MLPs twice as wide; per-layer inputs of
// `per_layer` values.
void gemma4_keys(json& j, int64_t window, int64_t sliding, int64_t global_head_dim, int64_t shared, int64_t per_layer) {
  json types = json::array();
  for (int64_t i = 0; i < j["num_hidden_layers"].get<int64_t>(); ++i)
    types.push_back((i + 1) % (sliding + 1) == 0 ? "full_attention" : "sliding_attention");
  j.update({{"model_type", "gemma4_text"}, {"rms_norm_eps", 1e-6}, {"sliding_window", window}, {"layer_types", types},
            {"global_head_dim", global_head_dim}, {"num_kv_shared_layers", shared}, {"use_double_wide_mlp", true},
            {"hidden_size_per_layer_input", per_layer}, {"vocab_size_per_layer_input", j["vocab_size"]},
            {"final_logit_softcapping", 30.0}, {"tie_word_embeddings", true}});
}

json synthetic_keys(const std::string& name) {
  if (name == "tiny-gemma4") {  // tiny's sizes with Gemma 4's traits: windows of 32, KV shared by the last 2 layers
    json j = shape("gemma4_text", 2048, 128, 384, 6, 4, 2, 32, 4096);
    gemma4_keys(j, 32, 2, 64, 2, 16);
    return j;
  }
  if (name == "gemma4-e2b") {  // google/gemma-4-E2B's text model
    json j = shape("gemma4_text", 262144, 1536, 6144, 35, 8, 1, 256, 131072);
    gemma4_keys(j, 512, 4, 512, 20, 256);
    return j;
  }
  if (name == "tiny" || name == "tiny-gemma2" || name == "tiny-gemma3" || name == "tiny-moe" || name == "tiny-phi3") {
    json j = shape("llama", 2048, 128, 384, 4, 4, 2, 32, 4096);
    j["tie_word_embeddings"] = true;
    if (name == "tiny-gemma2") gemma_keys(j, "gemma2", 32, 2);
    if (name == "tiny-gemma3") gemma_keys(j, "gemma3_text", 32, 3);
    if (name == "tiny-moe") qwen3_moe_keys(j, 8, 2, 96);
    if (name == "tiny-phi3") phi3_keys(j, 64, 0.75);
    return j;
  }
  if (name == "small") {
    json j = shape("llama", 8192, 512, 1536, 6, 8, 2, 64, 4096);
    j["tie_word_embeddings"] = true;
    return j;
  }
  if (name == "llama-1b" || name == "llama-8b") {  // Llama-3.2-1B and Llama-3.1-8B
    const bool big = name == "llama-8b";
    json j = big ? shape("llama", 128256, 4096, 14336, 32, 32, 8, 128, 131072)
                 : shape("llama", 128256, 2048, 8192, 16, 32, 8, 64, 131072);
    j.update({{"tie_word_embeddings", !big}, {"rope_theta", 500000.0},
              {"rope_scaling", {{"rope_type", "llama3"}, {"factor", big ? 8.0 : 32.0}, {"low_freq_factor", 1.0},
                                {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 8192}}}});
    return j;
  }
  if (name == "gemma2-2b") {
    json j = shape("gemma2", 256000, 2304, 9216, 26, 8, 4, 256, 8192);
    gemma_keys(j, "gemma2", 4096, 2);
    return j;
  }
  if (name == "gemma3-1b") {
    json j = shape("gemma3_text", 262144, 1152, 6912, 26, 4, 1, 256, 32768);
    gemma_keys(j, "gemma3_text", 512, 6);
    return j;
  }
  if (name == "phi3-mini") {  // Phi-3-mini-128k-instruct
    json j = shape("phi3", 32064, 3072, 8192, 32, 32, 32, 96, 131072);
    phi3_keys(j, 4096, 1.0);
    return j;
  }
  if (name == "qwen3-moe-a3b") {
    json j = shape("qwen3_moe", 151936, 2048, 6144, 48, 32, 4, 128, 40960);
    j["rope_theta"] = 1e6;
    qwen3_moe_keys(j, 128, 8, 768);
    return j;
  }
  if (name == "pythia-1b") {  // EleutherAI/pythia-1b as its config.json publishes it
    json j = shape("gpt_neox", 50304, 2048, 8192, 16, 8, 8, 256, 2048);
    j.update({{"layer_norm_eps", 1e-5}, {"rotary_pct", 0.25}, {"rotary_emb_base", 10000}, {"hidden_act", "gelu"},
              {"use_parallel_residual", true}, {"tie_word_embeddings", false}});
    return j;
  }
  if (name == "phi-2") {  // microsoft/phi-2
    json j = shape("phi", 51200, 2560, 10240, 32, 32, 32, 80, 2048);
    j.update({{"layer_norm_eps", 1e-5}, {"partial_rotary_factor", 0.4}, {"hidden_act", "gelu_new"},
              {"tie_word_embeddings", false}});
    return j;
  }
  if (name == "starcoder2-3b") {  // bigcode/starcoder2-3b
    json j = shape("starcoder2", 49152, 3072, 12288, 30, 24, 2, 128, 16384);
    j.update({{"norm_epsilon", 1e-5}, {"sliding_window", 4096}, {"rope_theta", 999999.4420358813},
              {"use_bias", true}, {"tie_word_embeddings", true}});
    return j;
  }
  if (name == "gpt2") {  // openai-community/gpt2 (124M)
    json j = shape("gpt2", 50257, 768, 3072, 12, 12, 12, 64, 1024);
    j.update({{"layer_norm_epsilon", 1e-5}, {"activation_function", "gelu_new"}, {"tie_word_embeddings", true}});
    return j;
  }
  if (name == "gpt-oss-20b") {  // openai/gpt-oss-20b (its experts as bf16, not MXFP4)
    json j = shape("gpt_oss", 201088, 2880, 2880, 24, 64, 8, 64, 131072);
    j.update({{"num_local_experts", 32}, {"num_experts_per_tok", 4}, {"sliding_window", 128}, {"rope_theta", 150000},
              {"rope_scaling", {{"rope_type", "yarn"}, {"factor", 32.0}, {"beta_fast", 32.0}, {"beta_slow", 1.0},
                                {"truncate", false}, {"original_max_position_embeddings", 4096}}},
              {"swiglu_limit", 7.0}, {"tie_word_embeddings", false}});
    return j;
  }
  if (name == "seed-oss-36b") {  // ByteDance-Seed/Seed-OSS-36B-Base
    json j = shape("seed_oss", 155136, 5120, 27648, 64, 80, 8, 128, 524288);
    j.update({{"attention_bias", true}, {"attention_out_bias", false}, {"rope_theta", 10000000.0},
              {"tie_word_embeddings", false}});
    return j;
  }
  if (name == "exaone4-32b") {  // LGAI-EXAONE/EXAONE-4.0-32B: three sliding layers of 4096 to one global
    json j = shape("exaone4", 102400, 5120, 27392, 64, 40, 8, 128, 131072);
    j.update({{"sliding_window", 4096}, {"sliding_window_pattern", "LLLG"}, {"rope_theta", 1000000.0},
              {"tie_word_embeddings", false}});
    return j;
  }
  if (name == "hunyuan-0.5b") {  // tencent/Hunyuan-0.5B-Instruct
    json j = shape("hunyuan_v1_dense", 120818, 1024, 3584, 24, 16, 8, 128, 32768);
    j.update({{"tie_word_embeddings", true},
              {"rope_scaling", {{"type", "dynamic"}, {"alpha", 1000.0}, {"factor", 1.0}}}});
    return j;
  }
  if (name == "ernie4.5-0.3b") {  // baidu/ERNIE-4.5-0.3B-PT
    json j = shape("ernie4_5", 103424, 1024, 3072, 18, 16, 2, 64, 131072);
    j.update({{"tie_word_embeddings", true}, {"rope_theta", 500000.0}});
    return j;
  }
  if (name == "apertus-8b") {  // swiss-ai/Apertus-8B-2509
    json j = shape("apertus", 131072, 4096, 21504, 32, 32, 8, 128, 65536);
    j.update({{"tie_word_embeddings", false}});
    return j;
  }
  if (name == "tiny-qwen3.5") {  // tiny's sizes with Qwen 3.5's layers: three Gated DeltaNet layers to one attention
    json j = shape("qwen3_5_text", 2048, 128, 384, 4, 4, 2, 32, 4096);
    j.update({{"tie_word_embeddings", true}, {"linear_num_key_heads", 2}, {"linear_num_value_heads", 4},
              {"linear_key_head_dim", 32}, {"linear_value_head_dim", 32}, {"full_attention_interval", 4}});
    return j;
  }
  if (name == "tiny-granite4") {  // tiny's sizes with Granite 4's layers: three Mamba2 layers to one attention
    json j = shape("granitemoehybrid", 2048, 128, 384, 4, 4, 2, 32, 4096);
    j.update({{"tie_word_embeddings", true}, {"num_local_experts", 0}, {"shared_intermediate_size", 384},
              {"mamba_n_heads", 8}, {"mamba_d_head", 32}, {"mamba_d_state", 32}, {"mamba_n_groups", 1},
              {"mamba_chunk_size", 64}, {"layer_types", {"mamba", "mamba", "mamba", "attention"}}});
    return j;
  }
  if (name == "granite-4.0-h-tiny") {  // ibm-granite/granite-4.0-h-tiny's sizes (7B, 1B active): 4 of 40 layers attend
    json j = shape("granitemoehybrid", 100352, 1536, 512, 40, 12, 4, 128, 131072);
    json types = json::array();
    for (int i = 0; i < 40; ++i) types.push_back(i % 10 == 5 ? "attention" : "mamba");
    j.update({{"tie_word_embeddings", true}, {"num_local_experts", 64}, {"num_experts_per_tok", 6},
              {"shared_intermediate_size", 1024}, {"mamba_n_heads", 48}, {"mamba_d_head", 64}, {"mamba_d_state", 128},
              {"mamba_n_groups", 1}, {"mamba_d_conv", 4}, {"mamba_expand", 2}, {"mamba_chunk_size", 256},
              {"position_embedding_type", "nope"}, {"embedding_multiplier", 12.0}, {"attention_multiplier", 0.0078125},
              {"residual_multiplier", 0.22}, {"logits_scaling", 6.0}, {"layer_types", types}});
    return j;
  }
  if (name == "lfm3-1.7b") {  // LiquidAI/LFM3-1.7B (transformers' Lfm3Config defaults): 13 conv, 6 full, 5 sliding
    json j = shape("lfm3", 128000, 2048, 7680, 24, 16, 4, 128, 128000);
    j.erase("rms_norm_eps");
    j["norm_eps"] = 1e-5;
    return j;
  }
  if (name == "nemotron-h-8b") {  // nvidia/Nemotron-H-8B-Base-8K: 24 Mamba2, 4 attention and 24 MLP layers
    json j = shape("nemotron_h", 131072, 4096, 21504, 52, 32, 8, 128, 8192);
    j.erase("rms_norm_eps");
    j.update({{"layer_norm_epsilon", 1e-5}, {"hybrid_override_pattern", "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-"},
              {"mamba_num_heads", 128}, {"mamba_head_dim", 64}, {"ssm_state_size", 128}, {"n_groups", 8},
              {"conv_kernel", 4}, {"chunk_size", 128}, {"mlp_hidden_act", "relu2"}});
    return j;
  }
  if (name == "falcon-h1-1.5b") {  // tiiuae/Falcon-H1-1.5B-Base's sizes (its muP multipliers left at 1)
    json j = shape("falcon_h1", 65537, 2048, 4608, 24, 8, 2, 128, 131072);
    j.update({{"mamba_d_ssm", 3072}, {"mamba_n_heads", 48}, {"mamba_d_head", 64}, {"mamba_d_state", 256},
              {"mamba_n_groups", 1}, {"mamba_d_conv", 4}, {"mamba_chunk_size", 128}, {"tie_word_embeddings", false}});
    return j;
  }
  if (name == "lfm2-8b-a1b") {  // LiquidAI/LFM2-8B-A1B: 18 short-convolution layers, 6 attention; 32 experts, 4 a token
    json j = shape("lfm2_moe", 65536, 2048, 7168, 24, 32, 8, 64, 128000);
    j.erase("rms_norm_eps");
    json types = json::array();
    for (int i = 0; i < 24; ++i)
      types.push_back(i == 2 || i == 6 || i == 10 || i == 14 || i == 18 || i == 21 ? "full_attention" : "conv");
    j.update({{"norm_eps", 1e-5}, {"layer_types", types}, {"num_experts", 32}, {"num_experts_per_tok", 4},
              {"moe_intermediate_size", 1792}, {"num_dense_layers", 2}, {"norm_topk_prob", true},
              {"use_expert_bias", true}, {"routed_scaling_factor", 1.0}, {"conv_L_cache", 3},
              {"rope_theta", 1000000.0}, {"tie_embedding", true}});
    return j;
  }
  if (name == "qwen3.5-9b") {  // Qwen/Qwen3.5-9B's text model (transformers' Qwen3_5TextConfig defaults)
    json j = shape("qwen3_5_text", 248320, 4096, 12288, 32, 16, 4, 256, 262144);
    j.update({{"tie_word_embeddings", false}, {"rms_norm_eps", 1e-6}, {"linear_num_key_heads", 16},
              {"linear_num_value_heads", 32}, {"linear_key_head_dim", 128}, {"linear_value_head_dim", 128},
              {"full_attention_interval", 4},
              {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000000.0}, {"partial_rotary_factor", 0.25}}}});
    return j;
  }
  if (name == "qwen3.5-35b-a3b") {  // transformers' Qwen3_5MoeTextConfig defaults (Qwen3.5-35B-A3B's text model)
    json j = shape("qwen3_5_moe_text", 248320, 2048, 512, 40, 16, 2, 256, 32768);
    j.erase("intermediate_size");  // no dense MLP
    j.update({{"tie_word_embeddings", false}, {"rms_norm_eps", 1e-6}, {"linear_num_key_heads", 16},
              {"linear_num_value_heads", 32}, {"linear_key_head_dim", 128}, {"linear_value_head_dim", 128},
              {"num_experts", 256}, {"num_experts_per_tok", 8}, {"moe_intermediate_size", 512},
              {"shared_expert_intermediate_size", 512}, {"full_attention_interval", 4},
              {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000000.0}, {"partial_rotary_factor", 0.25}}}});
    return j;
  }
  if (name == "qwen3-next-80b-a3b") {  // transformers' Qwen3NextConfig defaults (Qwen3-Next-80B-A3B)
    json j = shape("qwen3_next", 151936, 2048, 5632, 48, 16, 2, 256, 32768);
    j.update({{"tie_word_embeddings", false}, {"rms_norm_eps", 1e-6}, {"linear_num_key_heads", 16},
              {"linear_num_value_heads", 32}, {"linear_key_head_dim", 128}, {"linear_value_head_dim", 128},
              {"num_experts", 512}, {"num_experts_per_tok", 10}, {"moe_intermediate_size", 512},
              {"shared_expert_intermediate_size", 512}, {"norm_topk_prob", true}, {"full_attention_interval", 4},
              {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000000.0}, {"partial_rotary_factor", 0.25}}}});
    return j;
  }
  if (name == "lfm2-1.2b") {  // LiquidAI/LFM2-1.2B: ten short-convolution layers, six attention layers
    json j = shape("lfm2", 65536, 2048, 12288, 16, 32, 8, 64, 128000);
    j.erase("intermediate_size");
    j.erase("rms_norm_eps");
    j.update({{"block_ff_dim", 12288}, {"block_multiple_of", 256}, {"block_ffn_dim_multiplier", 1.0},
              {"block_auto_adjust_ff_dim", true}, {"conv_L_cache", 3}, {"full_attn_idxs", {2, 5, 8, 10, 12, 14}},
              {"norm_eps", 1e-5}, {"rope_theta", 1000000.0}, {"tie_embedding", true}});
    return j;
  }
  if (name == "olmo-hybrid-7b") {  // transformers' OlmoHybridConfig defaults, without rope as released
    json j = shape("olmo_hybrid", 100352, 3840, 11008, 32, 30, 30, 128, 65536);
    j.erase("head_dim");
    j.update({{"tie_word_embeddings", false}, {"rms_norm_eps", 1e-6},
              {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", nullptr}}}});
    return j;
  }
  if (name == "tiny-deepseek-v3") {  // tiny's sizes with DeepSeek V3's latent attention and router, a dense first layer
    json j = shape("deepseek_v3", 2048, 128, 384, 4, 4, 4, 16, 4096);
    j.update({{"tie_word_embeddings", true}, {"kv_lora_rank", 64}, {"q_lora_rank", 96}, {"qk_nope_head_dim", 32},
              {"qk_rope_head_dim", 16}, {"v_head_dim", 32}, {"n_routed_experts", 8}, {"num_experts_per_tok", 2},
              {"n_group", 4}, {"topk_group", 2}, {"moe_intermediate_size", 96}, {"first_k_dense_replace", 1}});
    return j;
  }
  if (name == "deepseek-v3" || name == "kimi-k2") {  // deepseek-ai/DeepSeek-V3 (671B), moonshotai/Kimi-K2 (1T)
    const bool kimi = name == "kimi-k2";
    json j = shape(kimi ? "kimi_k2" : "deepseek_v3", kimi ? 163840 : 129280, 7168, 18432, 61, kimi ? 64 : 128,
                   kimi ? 64 : 128, 64, kimi ? 131072 : 163840);
    j.update({{"tie_word_embeddings", false}, {"rms_norm_eps", 1e-6}, {"kv_lora_rank", 512}, {"q_lora_rank", 1536},
              {"qk_nope_head_dim", 128}, {"qk_rope_head_dim", 64}, {"v_head_dim", 128},
              {"n_routed_experts", kimi ? 384 : 256}, {"num_experts_per_tok", 8}, {"n_group", kimi ? 1 : 8},
              {"topk_group", kimi ? 1 : 4}, {"n_shared_experts", 1}, {"moe_intermediate_size", 2048},
              {"first_k_dense_replace", kimi ? 1 : 3}, {"routed_scaling_factor", kimi ? 2.827 : 2.5},
              {"rope_scaling", {{"type", "yarn"}, {"rope_theta", kimi ? 50000.0 : 10000.0},
                                {"factor", kimi ? 32.0 : 40.0}, {"mscale", 1.0}, {"mscale_all_dim", 1.0},
                                {"original_max_position_embeddings", 4096}, {"beta_fast", kimi ? 1.0 : 32.0},
                                {"beta_slow", 1.0}}}});
    return j;
  }
  if (name == "deepseek-v3.2") {  // deepseek-ai/DeepSeek-V3.2: DeepSeek V3's sizes, sparse attention of 2048 keys
    json j = synthetic_keys("deepseek-v3");
    j.update({{"model_type", "deepseek_v32"}, {"index_topk", 2048}});
    return j;
  }
  if (name == "glm-5") {  // transformers' GlmMoeDsaConfig defaults (zai-org/GLM-5)
    json j = shape("glm_moe_dsa", 154880, 6144, 12288, 78, 64, 64, 64, 202752);
    j.update({{"tie_word_embeddings", false}});
    return j;
  }
  if (name == "glm-4.7-flash") {  // transformers' Glm4MoeLiteConfig defaults (zai-org/GLM-4.7-Flash)
    json j = shape("glm4_moe_lite", 154880, 2048, 10240, 47, 20, 20, 64, 202752);
    j.update({{"tie_word_embeddings", false}});
    return j;
  }
  if (name == "mistral-small-4") {  // transformers' Mistral4Config defaults (Mistral Small 4's text model)
    json j = shape("mistral4", 131072, 4096, 12288, 36, 32, 32, 128, 1048576);
    j.update({{"tie_word_embeddings", false}, {"rms_norm_eps", 1e-6}});
    return j;
  }
  if (name == "tiny-glm4-moe") {  // tiny's sizes with GLM-4.5's router: a dense first layer, 8 experts in 4 groups
    json j = shape("glm4_moe", 2048, 128, 384, 4, 4, 2, 32, 4096);
    j.update({{"n_routed_experts", 8}, {"num_experts_per_tok", 2}, {"n_group", 4}, {"topk_group", 2},
              {"n_shared_experts", 1}, {"moe_intermediate_size", 96}, {"routed_scaling_factor", 2.5},
              {"first_k_dense_replace", 1}, {"attention_bias", true}});
    return j;
  }
  if (name == "glm4.5-air") {  // zai-org/GLM-4.5-Air
    json j = shape("glm4_moe", 151552, 4096, 10944, 46, 96, 8, 128, 131072);
    j.update({{"n_routed_experts", 128}, {"num_experts_per_tok", 8}, {"n_shared_experts", 1},
              {"moe_intermediate_size", 1408}, {"first_k_dense_replace", 1}, {"attention_bias", true},
              {"rope_theta", 1000000.0}, {"partial_rotary_factor", 0.5}});
    return j;
  }
  if (name == "ernie4.5-21b-a3b") {  // baidu/ERNIE-4.5-21B-A3B-PT
    json j = shape("ernie4_5_moe", 103424, 2560, 12288, 28, 20, 4, 128, 131072);
    j.update({{"moe_num_experts", 64}, {"moe_k", 6}, {"moe_num_shared_experts", 2}, {"moe_intermediate_size", 1536},
              {"moe_layer_start_index", 1}, {"tie_word_embeddings", true}, {"rope_theta", 500000.0}});
    return j;
  }
  if (name == "hunyuan-a13b") {  // tencent/Hunyuan-A13B-Instruct
    json j = shape("hunyuan_v1_moe", 128167, 4096, 3072, 32, 32, 8, 128, 32768);
    j.update({{"num_experts", 64}, {"moe_topk", 8},
              {"rope_scaling", {{"type", "dynamic"}, {"alpha", 1000.0}, {"factor", 1.0}}}});
    return j;
  }
  if (name == "minimax-m2") {  // MiniMaxAI/MiniMax-M2
    json j = shape("minimax_m2", 200064, 3072, 1536, 62, 48, 8, 128, 196608);
    j.update({{"num_local_experts", 256}, {"num_experts_per_tok", 8}, {"rotary_dim", 64}, {"rope_theta", 5000000.0}});
    return j;
  }
  throw std::invalid_argument(fmt::format("unknown synthetic model '{}' (known: {})", name, kSyntheticNames));
}

}  // namespace

ModelConfig ModelConfig::synthetic(const std::string& name) { return from_json(synthetic_keys(name).dump()); }

}  // namespace prefix_scorer
