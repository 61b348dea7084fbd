// Kimi Linear (kimi_linear): Kimi Delta Attention layers (a delta rule whose decay is one a key channel, see
// gated_delta_rule.h) between multi-head latent attention layers without rope (DeepSeek V3's, the keys' rotary part
// shared by the heads and left unrotated), under DeepSeek V3's router and experts named as Mixtral's
// (block_sparse_moe). Its config names DeepSeek's keys its own way (KimiLinearConfig's attribute_map) and keeps the
// linear attention's sizes and layers in linear_attn_config, as released. Beside it Ling 3 (bailing_hybrid), whose
// config and layers transformers derives from Kimi Linear's: KDA with full-rank decay and gate projections and a
// bounded ("safe") decay, latent attention with an interleaved rope and a sigmoid gate a head, DeepSeek's router
// over experts named as qwen2_moe's, under Ling's names (word_embeddings, attention, dense, expert_bias).

#include "model/config/config_json.h"
#include "model/families/families.h"
#include "model/families/gated_deltanet_keys.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace prefix_scorer::families {
namespace {

using config_json::get_or;
using config_json::has_field;
using config_json::json;

// Kimi's names of DeepSeek V3's keys (the attribute_map of KimiLinearConfig), as (DeepSeek's, Kimi's).
const std::vector<std::pair<const char*, const char*>> kKimiNames{
    {"max_position_embeddings", "model_max_length"}, {"norm_topk_prob", "moe_renormalize"},
    {"n_group", "num_expert_group"}, {"n_routed_experts", "num_experts"},
    {"num_experts_per_tok", "num_experts_per_token"}, {"n_shared_experts", "num_shared_experts"}};

// Kimi's names read as DeepSeek's.
void prepare_kimi_keys(json& j) {
  for (const auto& [deepseek, kimi] : kKimiNames)
    if (has_field(j, kimi)) j[deepseek] = j[kimi];
}

// The linear attention's sizes and layers: linear_attn_config's (as released) over the top-level keys transformers
// saves beside it; layer_types over linear_attn_config's 1-based full_attn_layers and kda_layers, else every
// fourth layer but the first full.
void read_kimi_keys(const json& j, ModelConfig& c) {
  const json linear = j.contains("linear_attn_config") && j["linear_attn_config"].is_object() ? j["linear_attn_config"]
                                                                                                : json::object();
  const int64_t heads = get_or<int64_t>(linear, "num_heads", get_or<int64_t>(j, "linear_num_heads", 32));
  const int64_t head_dim = get_or<int64_t>(linear, "head_dim", get_or<int64_t>(j, "linear_head_dim", 128));
  c.linear_conv_taps = get_or<int64_t>(linear, "short_conv_kernel_size", get_or<int64_t>(j, "linear_conv_kernel_dim", 4));
  if (heads < 1 || head_dim < 1 || c.linear_conv_taps < 2)
    throw std::invalid_argument(fmt::format("config.json: linear attention of {} heads of {} with {} taps (at least "
                                            "one head, two taps)", heads, head_dim, c.linear_conv_taps));
  c.linear_key_heads = c.linear_value_heads = heads;
  c.linear_key_head_dim = c.linear_value_head_dim = head_dim;
  std::vector<bool>& linear_layers = c.linear_attention_layers;
  if (read_linear_layer_types(j, c)) return;
  if (has_field(linear, "full_attn_layers") && has_field(linear, "kda_layers")) {
    std::vector<int> kind(c.num_layers, -1);  // -1 unnamed, 0 full, 1 linear
    for (const char* key : {"full_attn_layers", "kda_layers"})
      for (const int64_t layer : get_or<std::vector<int64_t>>(linear, key, {})) {
        if (layer < 1 || layer > c.num_layers)
          throw std::invalid_argument(fmt::format("config.json: linear_attn_config's {} names layer {} of {} (they "
                                                  "count from 1)", key, layer, c.num_layers));
        kind[layer - 1] = std::string(key) == "kda_layers";
      }
    for (int64_t i = 0; i < c.num_layers; ++i) {
      if (kind[i] < 0)
        throw std::invalid_argument(fmt::format("config.json: linear_attn_config names no kind for layer {}", i + 1));
      linear_layers.push_back(kind[i] == 1);
    }
  } else {
    for (int64_t i = 0; i < c.num_layers; ++i) linear_layers.push_back(i == 0 || i % 4 != 0);
  }
}

void write_kimi_keys(const ModelConfig& c, json& j) {
  for (const auto& [deepseek, kimi] : kKimiNames) {
    if (!j.contains(deepseek)) continue;
    j[kimi] = j[deepseek];
    j.erase(deepseek);
  }
  j.update({{"linear_num_heads", c.linear_value_heads}, {"linear_head_dim", c.linear_value_head_dim},
            {"linear_conv_kernel_dim", c.linear_conv_taps}});
  write_linear_layer_types(c, j);
}

// BailingHybridConfig's: the linear attention as wide as the attention (num_attention_heads of head_dim, 128 by
// default), short_conv_kernel_size taps, unless linear_num_heads, linear_head_dim, linear_conv_kernel_dim say
// otherwise (as transformers saves them: its saved head_dim is qk_rope_head_dim); layer_types, else the last of every
// layer_group_size (6) full; the safe gate's bound kda_lower_bound (-5) under kda_safe_gate (true); a gate a head on
// the latent attention.
void read_ling_keys(const json& j, ModelConfig& c) {
  c.linear_key_heads = c.linear_value_heads = get_or<int64_t>(j, "linear_num_heads", c.num_heads);
  c.linear_key_head_dim = c.linear_value_head_dim =
      get_or<int64_t>(j, "linear_head_dim", get_or<int64_t>(j, "head_dim", 128));
  c.linear_conv_taps = get_or<int64_t>(j, "linear_conv_kernel_dim", get_or<int64_t>(j, "short_conv_kernel_size", 4));
  const int64_t group = get_or<int64_t>(j, "layer_group_size", 6);
  if (c.linear_key_heads < 1 || c.linear_key_head_dim < 1 || c.linear_conv_taps < 2 || group < 1)
    throw std::invalid_argument(fmt::format("config.json: linear attention of {} heads of {} with {} taps, "
                                            "layer_group_size {} (positive, at least two taps)", c.linear_key_heads,
                                            c.linear_key_head_dim, c.linear_conv_taps, group));
  if (!read_linear_layer_types(j, c))
    for (int64_t i = 0; i < c.num_layers; ++i) c.linear_attention_layers.push_back((i + 1) % group != 0);
  c.linear_gate_lower_bound = get_or<bool>(j, "kda_safe_gate", true) ? get_or<double>(j, "kda_lower_bound", -5.0) : 0.0;
  c.attention_head_gate = true;
}

void write_ling_keys(const ModelConfig& c, json& j) {
  write_kimi_keys(c, j);
  j.update({{"short_conv_kernel_size", c.linear_conv_taps}, {"kda_safe_gate", c.linear_gate_lower_bound != 0},
            {"kda_lower_bound", c.linear_gate_lower_bound != 0 ? c.linear_gate_lower_bound : -5.0}});
}

// Sizes as config.json keys, Kimi's way: linear_attn_config with its 1-based layer lists.
json kimi_shape(int64_t vocab, int64_t hidden, int64_t intermediate, int64_t layers, int64_t heads,
                const std::vector<int64_t>& full_layers, int64_t linear_heads, int64_t linear_head_dim) {
  json j = shape("kimi_linear", vocab, hidden, intermediate, layers, heads, heads, 0, 1048576);
  j.erase("head_dim");
  std::vector<int64_t> kda;
  for (int64_t layer = 1; layer <= layers; ++layer)
    if (std::find(full_layers.begin(), full_layers.end(), layer) == full_layers.end()) kda.push_back(layer);
  j["linear_attn_config"] = {{"num_heads", linear_heads}, {"head_dim", linear_head_dim}, {"short_conv_kernel_size", 4},
                             {"full_attn_layers", full_layers}, {"kda_layers", kda}};
  return j;
}

// tiny's sizes with Kimi Linear's layers: three KDA layers, then latent attention
json tiny_kimi_linear() {
  json j = kimi_shape(2048, 128, 384, 4, 4, {4}, 4, 32);
  j.update({{"tie_word_embeddings", true}, {"kv_lora_rank", 64}, {"qk_nope_head_dim", 32}, {"qk_rope_head_dim", 16},
            {"v_head_dim", 32}, {"num_experts", 8}, {"num_experts_per_token", 2}, {"moe_intermediate_size", 96}});
  return j;
}

// moonshotai/Kimi-Linear-48B-A3B: transformers' KimiLinearConfig defaults; its full-attention layers (1-based) as
// recalled from the released config.json, not read from it.
json kimi_linear_48b_a3b() {
  json j = kimi_shape(163840, 2304, 9216, 27, 32, {4, 8, 12, 16, 20, 24, 27}, 32, 128);
  j.update({{"tie_word_embeddings", false}, {"rms_norm_eps", 1e-5}, {"kv_lora_rank", 512}, {"q_lora_rank", nullptr},
            {"qk_nope_head_dim", 128}, {"qk_rope_head_dim", 64}, {"v_head_dim", 128}, {"num_experts", 256},
            {"num_experts_per_token", 8}, {"num_shared_experts", 1}, {"moe_intermediate_size", 1024},
            {"routed_scaling_factor", 2.446}, {"first_k_dense_replace", 1}});
  return j;
}

// tiny's sizes with Ling 3's layers: three KDA layers, then latent attention
json tiny_ling() {
  json j = shape("bailing_hybrid", 2048, 128, 384, 4, 4, 4, 32, 4096);
  j.update({{"tie_word_embeddings", true}, {"kv_lora_rank", 64}, {"qk_nope_head_dim", 32}, {"qk_rope_head_dim", 16},
            {"v_head_dim", 32}, {"num_experts", 8}, {"num_experts_per_token", 2}, {"num_expert_group", 2},
            {"topk_group", 1}, {"moe_intermediate_size", 96}, {"first_k_dense_replace", 1}, {"layer_group_size", 4}});
  return j;
}

// inclusionAI/Ling-3.0-Flash: transformers' BailingHybridConfig defaults (not read from the released files)
json ling_3_flash() {
  json j = shape("bailing_hybrid", 157184, 2560, 6144, 42, 32, 32, 128, 262144);
  j.update({{"tie_word_embeddings", false}, {"rms_norm_eps", 1e-6}, {"kv_lora_rank", 512}, {"q_lora_rank", nullptr},
            {"qk_nope_head_dim", 128}, {"qk_rope_head_dim", 64}, {"v_head_dim", 128}, {"num_experts", 512},
            {"num_experts_per_token", 8}, {"num_shared_experts", 1}, {"num_expert_group", 8}, {"topk_group", 4},
            {"moe_intermediate_size", 768}, {"routed_scaling_factor", 2.5}, {"first_k_dense_replace", 2},
            {"rope_theta", 6000000.0}, {"layer_group_size", 6}});
  return j;
}

}  // namespace

std::vector<ModelFamily> kimi_linear() {
  ModelFamily f = base("kimi_linear");
  f.default_eps = 1e-5;
  f.latent = {512, 0, 128, 64, 128};
  f.latent.unrotated = true;
  f.deltanet = DeltaNetLayout::kKimi;
  f.deltanet_module = "self_attn";
  f.prepare_keys = prepare_kimi_keys;
  f.read_keys = read_kimi_keys;
  f.write_keys = write_kimi_keys;
  f.mlp_module = "block_sparse_moe";  // transformers saves every layer's MLP under the experts' module ...
  f.dense_mlp_module_as_released = "mlp";  // ... the release its dense ones under mlp
  ExpertTraits& e = f.experts;
  deepseek_moe(e, 256, 8, 1024);
  e.layers = MoeLayerRule::kMlpLayerTypes;
  e.default_first_dense = 1;
  e.default_scaling = 2.446;
  name_mixtral_experts(e);
  e.correction_bias = "block_sparse_moe.gate.e_score_correction_bias";
  e.shared = "block_sparse_moe.shared_experts";
  f.synthetic_shapes = {{"tiny-kimi-linear", tiny_kimi_linear}, {"kimi-linear-48b-a3b", kimi_linear_48b_a3b}};

  ModelFamily ling = base("bailing_hybrid");
  ling.latent = {512, 0, 128, 64, 128};
  ling.default_rope_theta = 6000000.0;
  ling.deltanet = DeltaNetLayout::kLing;
  ling.embed = "model.word_embeddings";
  ling.attn = ling.deltanet_module = "attention";
  ling.o_proj = "dense";
  ling.prepare_keys = prepare_kimi_keys;
  ling.read_keys = read_ling_keys;
  ling.write_keys = write_ling_keys;
  ExpertTraits& le = ling.experts;
  deepseek_moe(le, 512, 8, 768);
  le.layers = MoeLayerRule::kMlpLayerTypes;
  le.default_first_dense = 2;
  le.default_groups = 8;
  le.default_groups_chosen = 4;
  le.default_scaling = 2.5;
  le.correction_bias = "mlp.gate.expert_bias";
  ling.synthetic_shapes = {{"tiny-ling-3", tiny_ling}, {"ling-3-flash", ling_3_flash}};
  return {f, ling};
}

}  // namespace prefix_scorer::families
