#include "model/config/model_config.h"

#include "json_integer.h"
#include "model/config/config_enums.h"
#include "model/config/config_json.h"
#include "model/config/expert_keys.h"
#include "model/config/json_special_floats.h"
#include "model/config/latent_attention_keys.h"
#include "model/config/model_family.h"
#include "model/config/rope_keys.h"
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

// A quantization the family's checkpoints cannot carry: MXFP4, which transformers reads for gpt_oss's experts alone.
bool quantization_foreign_to(const WeightQuantization& q, const ModelFamily& family) {
  return q.method == QuantMethod::kMxfp4 && (family.quantization == nullptr || std::string(family.quantization) != "mxfp4");
}

// A size under the family's key, or under transformers' usual name (which GPT-2's config maps onto its own).
int64_t size_field(const json& j, const char* key, const char* usual) {
  return has_field(j, key) ? get_or<int64_t>(j, key, 0) : require<int64_t>(j, usual);
}

// GPT-2: learned positions instead of rope, and its attention options as GPT2Attention reads them (the eager-only
// reorder_and_upcast_attn changes no number in fp32 and is ignored, as transformers' default SDPA path does).
void parse_learned_positions(const json& j, ModelConfig& c) {
  if (get_or<bool>(j, "add_cross_attention", false))
    throw std::invalid_argument("config.json: 'add_cross_attention' is not supported (decoder-only models are)");
  c.learned_positions = true;
  c.rope_layers.assign(std::max<int64_t>(c.num_layers, 0), false);
  if (!get_or<bool>(j, "scale_attn_weights", true)) c.attention_multiplier = 1.0;
  c.scale_by_inverse_layer = get_or<bool>(j, "scale_attn_by_inverse_layer_idx", false);
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

// Whether text tokens attend both ways: use_bidirectional_attention true, or "all" (Gemma 4's "vision" makes only
// image tokens bidirectional, text stays causal).
bool bidirectional_text(const json& j) {
  if (!has_field(j, "use_bidirectional_attention")) return false;
  const json& value = j["use_bidirectional_attention"];
  if (value.is_string()) return value.get<std::string>() != "vision";
  return get_or<bool>(j, "use_bidirectional_attention", false);
}

// A multimodal checkpoint's text model (text_config, of `text_type` where it omits its model_type), the wrapper's
// tie_word_embeddings carried in.
json text_config_of(const json& j, const char* text_type) {
  json text = j.contains("text_config") ? j["text_config"] : json::object();
  if (!text.is_object()) throw std::invalid_argument("config.json: 'text_config' is not a JSON object");
  if (!text.contains("model_type")) text["model_type"] = text_type;
  if (multimodal_text_type(text["model_type"].get<std::string>()) != nullptr)
    throw std::invalid_argument("config.json: text_config is itself multimodal");
  for (const char* key : {"tie_word_embeddings", "quantization_config"})  // the whole checkpoint's
    if (j.contains(key)) text[key] = j[key];
  return text;
}

// The config's sections beside the text model's keys: the quantization its projections are stored in (dequantized
// at load), no vision tower, causal attention for text.
void check_sections(const json& j, const ModelFamily& family, ModelConfig& c) {
  c.quantization = parse_quantization(j.contains("quantization_config") ? j["quantization_config"] : json());
  if (quantization_foreign_to(c.quantization, family))
    throw std::invalid_argument(
        fmt::format("config.json: quant_method 'mxfp4' is not supported for {} (gpt_oss's is)", c.model_type));
  if (j.contains("vision_config") && !j["vision_config"].is_null())
    throw std::invalid_argument(
        fmt::format("config.json: 'vision_config' is not supported (a plain {} text model is)", c.model_type));
  if (bidirectional_text(j))
    throw std::invalid_argument("config.json: 'use_bidirectional_attention' is not supported (causal models are)");
}

// The activation and the sizes under the family's keys, with its defaults.
void read_sizes(const json& j, const ModelFamily& family, ModelConfig& c) {
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
}

// The projections' biases.
void read_biases(const json& j, const ModelFamily& family, ModelConfig& c) {
  const bool attention_bias = get_or<bool>(j, "attention_bias", family.attention_bias_default);
  c.qkv_bias = family.qkv_bias || attention_bias;
  c.o_bias = family.o_bias_key != nullptr ? get_or<bool>(j, family.o_bias_key, false)
                                          : family.attention_bias_on_o && attention_bias;
  c.mlp_bias = family.reads_mlp_bias && get_or<bool>(j, "mlp_bias", false);
  if (family.all_bias_key != nullptr) c.qkv_bias = c.o_bias = c.mlp_bias = get_or<bool>(j, family.all_bias_key, family.all_bias_default);
  if (family.always_biased) c.qkv_bias = c.o_bias = c.mlp_bias = true;
  if (family.always_mlp_bias) c.mlp_bias = true;
  c.lm_head_bias = family.output_layer_bias || (family.all_bias_on_output && c.mlp_bias);
}

// The block's traits: the family's norms, gates, per-layer heads, sinks, value widths and multipliers.
void read_block_traits(const json& j, const ModelFamily& family, ModelConfig& c) {
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
  c.attention_sinks = family.attention_sinks;
  c.sinks_on_sliding_only = family.sinks_on_sliding_only;
  if (family.value_head_dim_key != nullptr)
    c.value_head_dim = get_or<int64_t>(j, family.value_head_dim_key, family.default_value_head_dim);
  if (family.value_scale_key != nullptr)  // null: unscaled
    c.value_multiplier = j.contains(family.value_scale_key) && j[family.value_scale_key].is_null()
                             ? 1.0
                             : get_or<double>(j, family.value_scale_key, family.default_value_scale);
}

// Layers alternating between sliding and full attention (the family's AlternatingWindows), or one window for all.
void read_windows(const json& j, const ModelFamily& family, ModelConfig& c) {
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
    const json text = text_config_of(j, text_type);
    try {
      return from_json(text.dump());
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("{} text_config: {}", c.model_type, e.what()));
    }
  }
  const ModelFamily& family = model_family(c.model_type);
  if (family.prepare_keys != nullptr) family.prepare_keys(j);
  check_sections(j, family, c);
  read_sizes(j, family, c);
  read_rope(j, family, c);
  read_biases(j, family, c);
  if (family.position_embed != nullptr) parse_learned_positions(j, c);
  read_block_traits(j, family, c);
  if (family.experts.present) read_experts(j, family.experts, c);
  read_windows(j, family, c);
  if (family.nope_layers) parse_nope_layers(j, c);
  if (family.read_keys != nullptr) family.read_keys(j, c);
  if (family.latent.kv_rank > 0) read_latent_attention(j, family.latent, c);
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
  // transformers' sliding mask needs a window and refuses to run without one: there is no number to match.
  if (sliding_window == 0 &&
      std::find(layer_kinds.begin(), layer_kinds.end(), LayerKind::kSlidingAttention) != layer_kinds.end())
    throw std::invalid_argument("config.json: sliding_attention layers with sliding_window null are not supported "
                                "(transformers' sliding mask needs a window)");
  if (sliding_window < 0 || attn_softcap < 0 || final_softcap < 0 || query_pre_attn_scalar < 0 ||
      attention_multiplier < 0)
    throw std::invalid_argument(
        "config: sliding_window, the soft-caps, query_pre_attn_scalar and attention_multiplier must not be negative");
  if (!(logits_scaling != 0)) throw std::invalid_argument("config: logits_scaling must not be 0");
  if (activation == Activation::kXielu && (gated_mlp || num_experts > 0))
    throw std::invalid_argument("config: hidden_act xielu (learned per layer) is supported in ungated MLPs");
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

json optional_json(double value) { return value == 0 ? json() : json(value); }

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
  if (family.experts.present) write_experts(*this, family.experts, j);
  if (latent_attention()) write_latent_attention(*this, j);
  if (family.default_index_topk > 0) j["index_topk"] = dense_attention_limit;  // other limits: the family's keys
  if (family.output_vocab_key != nullptr)
    j[family.output_vocab_key] = output_vocab_size > 0 ? json(output_vocab_size) : json();
  if (quantization.method != QuantMethod::kNone) j["quantization_config"] = json::parse(quantization.config);
  if (sliding_rope) {
    j["rope_parameters"] = {{"full_attention", rope_parameters}, {"sliding_attention", rope_json(*sliding_rope)}};
    j["rope_scaling"] = nullptr;
  }
  if (family.write_keys != nullptr) family.write_keys(*this, j);
  return j.dump(2);
}

ModelConfig ModelConfig::synthetic(const std::string& name) { return from_json(synthetic_shape_keys(name).dump()); }

}  // namespace prefix_scorer
