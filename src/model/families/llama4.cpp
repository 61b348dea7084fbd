// Meta's Llama 4 text model (llama4_text; inside the llama4 wrapper as released): every no_rope_layer_interval-th
// layer without rope (no_rope_layers), the others rotating interleaved pairs (rows reordered at load) and, under
// use_qk_norm, norming q and k per head without a weight once rotated; the layers without rope scale their queries
// by position (attn_temperature_tuning: 1 + attn_scale ln(1 + floor((p + 1) / floor_scale)), in fp32). The rotating
// layers attend within chunks of attention_chunk_size (layer_types' chunked_attention), served as whole attention
// up to that many tokens and refused past it by name. The MoE layers (moe_layers, else every
// interleave_moe_layer_step-th) route each token to its top num_experts_per_tok experts by the sigmoid of their
// logits, unnormalized, each expert reading the input times its weight (experts stacked in experts.gate_up_proj,
// gate's columns then up's, and experts.down_proj); a shared expert beside them; experts and shared expert are
// intermediate_size wide, the dense layers' MLPs intermediate_size_mlp.

#include "model/config/config_json.h"
#include "model/families/families.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace prefix_scorer::families {
namespace {

using config_json::check_layer_type;
using config_json::get_or;
using config_json::has_field;
using config_json::json;

// Which layers attend within chunks: layer_types' chunked_attention ones, else (attention_chunk_size given) the
// layers that rotate.
std::vector<bool> chunked_layers(const json& j, const ModelConfig& c, bool chunk_given) {
  std::vector<bool> chunked;
  if (!has_field(j, "layer_types")) {
    for (int64_t i = 0; i < c.num_layers; ++i) chunked.push_back(chunk_given && c.layer_uses_rope(i));
    return chunked;
  }
  const auto types = get_or<std::vector<std::string>>(j, "layer_types", {});
  if (static_cast<int64_t>(types.size()) != c.num_layers)
    throw std::invalid_argument(
        fmt::format("config.json: layer_types has {} entries for {} layers", types.size(), c.num_layers));
  for (const std::string& type : types) {
    check_layer_type(type, {"full_attention", "chunked_attention"});
    chunked.push_back(type == "chunked_attention");
  }
  return chunked;
}

void read_llama4_keys(const json& j, ModelConfig& c) {
  c.intermediate_size = get_or<int64_t>(j, "intermediate_size_mlp", 16384);
  c.moe_intermediate_size = c.shared_expert_intermediate_size = get_or<int64_t>(j, "intermediate_size", 8192);
  if (has_field(j, "moe_layers")) {
    c.moe_layers.assign(c.num_layers, false);
    for (const int64_t layer : get_or<std::vector<int64_t>>(j, "moe_layers", {})) {
      if (layer < 0 || layer >= c.num_layers)
        throw std::invalid_argument(
            fmt::format("config.json: moe_layers names layer {} of a model of {} layers", layer, c.num_layers));
      c.moe_layers[layer] = true;
    }
  } else {
    const int64_t step = get_or<int64_t>(j, "interleave_moe_layer_step", 1);
    if (step < 1)
      throw std::invalid_argument(fmt::format("config.json: interleave_moe_layer_step must be >= 1, got {}", step));
    for (int64_t i = 0; i < c.num_layers; ++i) c.moe_layers.push_back((i + 1) % step == 0);
  }
  c.router_weight_on_input = true;
  c.qk_unit_norm = get_or<bool>(j, "use_qk_norm", true);
  if (get_or<bool>(j, "attn_temperature_tuning", true)) {
    c.query_temperature = get_or<double>(j, "attn_scale", 0.1);
    c.query_temperature_floor = get_or<int64_t>(j, "floor_scale", 8192);
    if (c.query_temperature_floor < 1)
      throw std::invalid_argument(
          fmt::format("config.json: floor_scale must be >= 1, got {}", c.query_temperature_floor));
  }
  const bool chunk_given = !j.contains("attention_chunk_size") || !j["attention_chunk_size"].is_null();
  const int64_t chunk = get_or<int64_t>(j, "attention_chunk_size", 8192);
  const std::vector<bool> chunked = chunked_layers(j, c, chunk_given);
  bool any_chunked = false;
  for (const bool layer : chunked) any_chunked = any_chunked || layer;
  if (!any_chunked) return;
  if (!chunk_given || chunk < 1)
    throw std::invalid_argument("config.json: chunked_attention layers need attention_chunk_size >= 1");
  c.dense_attention_limit = chunk;
  c.dense_attention_limit_key = "attention_chunk_size";
}

void write_llama4_keys(const ModelConfig& c, json& j) {
  j["intermediate_size"] = c.moe_intermediate_size;
  j["intermediate_size_mlp"] = c.intermediate_size;
  std::vector<int64_t> moe;
  for (int64_t i = 0; i < c.num_layers; ++i)
    if (c.is_moe_layer(i)) moe.push_back(i);
  j["moe_layers"] = moe;
  j["use_qk_norm"] = c.qk_unit_norm;
  j["attn_temperature_tuning"] = c.query_temperature != 0;
  j["attn_scale"] = c.query_temperature;
  j["floor_scale"] = c.query_temperature_floor;
  j["attention_chunk_size"] = c.dense_attention_limit > 0 ? json(c.dense_attention_limit) : json();
  json types = json::array();  // the rotating layers chunked (all, where none rotates)
  bool none_rotates = true;
  for (int64_t i = 0; i < c.num_layers; ++i) none_rotates = none_rotates && !c.layer_uses_rope(i);
  for (int64_t i = 0; i < c.num_layers; ++i)
    types.push_back(c.dense_attention_limit > 0 && (none_rotates || c.layer_uses_rope(i)) ? "chunked_attention"
                                                                                          : "full_attention");
  j["layer_types"] = types;
}

// meta-llama/Llama-4-Scout-17B-16E and Llama-4-Maverick-17B-128E's text models, sizes as recalled (not read from
// the released files): 48 layers of 40 heads of 128 over 8 kv heads, 16 experts in every layer (Scout) or 128 in
// every other layer (Maverick, without q/k norms), one expert a token beside the shared one.
json llama4_scout() {
  json j = shape("llama4_text", 202048, 5120, 8192, 48, 40, 8, 128, 10485760);
  j.update({{"intermediate_size_mlp", 16384}, {"num_local_experts", 16}, {"num_experts_per_tok", 1},
            {"interleave_moe_layer_step", 1}, {"attention_chunk_size", 8192}, {"use_qk_norm", true},
            {"rope_parameters", {{"rope_type", "llama3"}, {"rope_theta", 500000.0}, {"factor", 16.0},
                                 {"low_freq_factor", 1.0}, {"high_freq_factor", 1.0},
                                 {"original_max_position_embeddings", 8192}}}});
  return j;
}

json llama4_maverick() {
  json j = shape("llama4_text", 202048, 5120, 8192, 48, 40, 8, 128, 1048576);
  j.update({{"intermediate_size_mlp", 16384}, {"num_local_experts", 128}, {"num_experts_per_tok", 1},
            {"interleave_moe_layer_step", 2}, {"attention_chunk_size", 8192}, {"use_qk_norm", false},
            {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 500000.0}}}});
  return j;
}

}  // namespace

std::vector<ModelFamily> llama4() {
  ModelFamily f = base("llama4_text");
  f.multimodal_wrapper = "llama4";
  f.sizes.intermediate = nullptr;  // both widths, with transformers' defaults, in read_llama4_keys
  f.default_eps = 1e-5;
  f.default_head_dim = 128;
  f.default_rope_theta = 500000.0;
  f.attention_bias_on_o = f.nope_layers = f.interleaved_rope = true;
  f.mlp_module = "feed_forward";
  f.read_keys = read_llama4_keys;
  f.write_keys = write_llama4_keys;
  ExpertTraits& e = f.experts;
  e.present = e.gate_up_columns = true;
  e.scores = RouterScores::kSigmoidOfChosen;
  e.default_experts = 16;
  e.default_per_token = 1;
  e.router = "feed_forward.router.weight";
  e.gate = e.up = "feed_forward.experts.gate_up_proj";
  e.down = "feed_forward.experts.down_proj";
  e.shared = "feed_forward.shared_expert";
  e.shared_behind_gate = false;
  f.synthetic_shapes = {{"llama4-scout", llama4_scout}, {"llama4-maverick", llama4_maverick}};
  return {f};
}

}  // namespace prefix_scorer::families
