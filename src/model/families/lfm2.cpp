// LFM2: short-convolution layers (conv: out(C * conv(B * x)) over 3 taps by default) between attention layers with
// per-head q/k norms (q_layernorm, k_layernorm) and out_proj; operator_norm before the mixer, ffn_norm before the
// MLP (feed_forward.w1, w3, w2), the final norm named embedding_norm; its own config keys (norm_eps, conv_L_cache,
// full_attn_idxs, block_ff_dim and the MLP's auto-adjusted width), embeddings tied by default. LFM3 below.

#include "model/config/config_json.h"
#include "model/families/families.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace prefix_scorer::families {
namespace {

using config_json::check_layer_type;
using config_json::get_or;
using config_json::has_field;
using config_json::json;
using config_json::optional_field;

// LFM3's keys over LFM2's: layer_types also sliding_attention (sliding_window, 256 by default; the default layers
// every fourth from 2 full, every fourth from 4 sliding, the rest conv), use_sandwich_norm (on by default:
// post_operator_norm and post_ffn_norm) and use_attention_gate (on by default: each head's output times a sigmoid of
// the input's projection, self_attn.gate_proj).
void read_lfm3_keys(const json& j, ModelConfig& c) {
  std::vector<std::string> types = get_or<std::vector<std::string>>(j, "layer_types", {});
  if (!has_field(j, "layer_types")) {
    for (int64_t i = 0; i < c.num_layers; ++i)
      types.emplace_back(i % 4 == 2 ? "full_attention" : i % 4 == 0 && i > 0 ? "sliding_attention" : "conv");
  }
  for (const std::string& type : types) {
    check_layer_type(type, {"conv", "full_attention", "sliding_attention"});
    c.short_conv_layers.push_back(type == "conv");
    c.layer_kinds.push_back(type == "sliding_attention" ? LayerKind::kSlidingAttention : LayerKind::kFullAttention);
  }
  c.sliding_window = optional_field<int64_t>(j, "sliding_window", 256);
  if (c.sliding_window < 0)
    throw std::invalid_argument(fmt::format("config.json: sliding_window must be >= 0, got {}", c.sliding_window));
  c.sandwich_norms = get_or<bool>(j, "use_sandwich_norm", true);
  c.attention_head_gate = get_or<bool>(j, "use_attention_gate", true);
}

// LFM2's keys: conv layers (short convolutions) in layer_types or all but full_attn_idxs, conv_L_cache (3 by
// default, LFM3's 7), conv_bias; tie_embedding as an alias (not LFM3's: its config never reads it); with `ff_keys`,
// the MLP's width block_auto_adjust_ff_dim'ed (2/3, times block_ffn_dim_multiplier, rounded up to
// block_multiple_of).
void read_lfm_keys(const json& j, ModelConfig& c, bool ff_keys, bool lfm3) {
  c.short_conv_taps = get_or<int64_t>(j, "conv_L_cache", lfm3 ? 7 : 3);
  c.short_conv_bias = get_or<bool>(j, "conv_bias", false);
  if (c.short_conv_taps < 2)
    throw std::invalid_argument(fmt::format("config.json: conv_L_cache must be >= 2, got {}", c.short_conv_taps));
  // LFM3's config skips LFM2's post-init, which reads tie_embedding: there it is no alias
  if (!lfm3 && has_field(j, "tie_embedding")) c.tie_word_embeddings = get_or<bool>(j, "tie_embedding", true);
  if (lfm3) {
    read_lfm3_keys(j, c);
  } else if (has_field(j, "layer_types")) {
    for (const auto& type : get_or<std::vector<std::string>>(j, "layer_types", {})) {
      check_layer_type(type, {"conv", "full_attention"});
      c.short_conv_layers.push_back(type == "conv");
    }
  } else {
    c.short_conv_layers.assign(std::max<int64_t>(c.num_layers, 0), false);
    if (has_field(j, "full_attn_idxs")) {
      c.short_conv_layers.assign(std::max<int64_t>(c.num_layers, 0), true);
      for (const int64_t i : get_or<std::vector<int64_t>>(j, "full_attn_idxs", {})) {
        if (i < 0 || i >= c.num_layers)
          throw std::invalid_argument(fmt::format("config.json: full_attn_idxs names layer {} of {}", i, c.num_layers));
        c.short_conv_layers[i] = false;
      }
    }
  }
  if (static_cast<int64_t>(c.short_conv_layers.size()) != c.num_layers)
    throw std::invalid_argument(fmt::format("config.json: layer_types has {} entries for {} layers",
                                            c.short_conv_layers.size(), c.num_layers));
  if (ff_keys && get_or<bool>(j, "block_auto_adjust_ff_dim", true)) {  // the multiplier 1.0 by default, never null
    const int64_t multiple = get_or<int64_t>(j, "block_multiple_of", 256);
    if (multiple < 1) throw std::invalid_argument(fmt::format("config.json: block_multiple_of must be >= 1, got {}", multiple));
    const auto ff = static_cast<int64_t>(get_or<double>(j, "block_ffn_dim_multiplier", 1.0) *
                                         static_cast<double>(2 * c.intermediate_size / 3));
    c.intermediate_size = multiple * ((ff + multiple - 1) / multiple);
  }
}

// The keys read_lfm_keys reads, written back (the MLP's width as it is, not adjusted again).
void write_lfm_keys(const ModelConfig& c, json& j, bool ff_keys, bool lfm3) {
  j.update({{"conv_L_cache", c.short_conv_taps}, {"conv_bias", c.short_conv_bias}});
  if (ff_keys) j["block_auto_adjust_ff_dim"] = false;
  json types = json::array();
  for (int64_t i = 0; i < c.num_layers; ++i)
    types.push_back(c.is_short_conv(i) ? "conv" : c.layer_window(i) > 0 ? "sliding_attention" : "full_attention");
  j["layer_types"] = types;
  if (lfm3)
    j.update({{"sliding_window", c.sliding_window}, {"use_sandwich_norm", c.sandwich_norms},
              {"use_attention_gate", c.attention_head_gate}});
}

}  // namespace

namespace {

// LiquidAI/LFM3-1.7B (transformers' Lfm3Config defaults): 13 conv, 6 full, 5 sliding
json lfm3_1_7b() {
  json j = shape("lfm3", 128000, 2048, 7680, 24, 16, 4, 128, 128000);
  j.erase("rms_norm_eps");
  j["norm_eps"] = 1e-5;
  return j;
}

// LiquidAI/LFM2-8B-A1B: 18 short-convolution layers, 6 attention; 32 experts, 4 a token
json lfm2_8b_a1b() {
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

// LiquidAI/LFM2-1.2B: ten short-convolution layers, six attention layers
json lfm2_1_2b() {
  json j = shape("lfm2", 65536, 2048, 12288, 16, 32, 8, 64, 128000);
  j.erase("intermediate_size");
  j.erase("rms_norm_eps");
  j.update({{"block_ff_dim", 12288}, {"block_multiple_of", 256}, {"block_ffn_dim_multiplier", 1.0},
            {"block_auto_adjust_ff_dim", true}, {"conv_L_cache", 3}, {"full_attn_idxs", {2, 5, 8, 10, 12, 14}},
            {"norm_eps", 1e-5}, {"rope_theta", 1000000.0}, {"tie_embedding", true}});
  return j;
}

}  // namespace

std::vector<ModelFamily> lfm2() {
  ModelFamily f = base("lfm2");
  f.qk_norm = f.tied_by_default = true;
  f.read_keys = [](const json& j, ModelConfig& c) { read_lfm_keys(j, c, true, false); };
  f.write_keys = [](const ModelConfig& c, json& j) { write_lfm_keys(c, j, true, false); };
  f.default_eps = 1e-5;
  f.default_rope_theta = 1e6;
  f.eps_key = "norm_eps";
  f.sizes.intermediate = "block_ff_dim";
  f.q_norm = "q_layernorm";
  f.k_norm = "k_layernorm";
  f.o_proj = "out_proj";
  f.input_norm = "operator_norm";
  f.post_norm = "ffn_norm";
  f.final_norm = "model.embedding_norm";
  f.mlp_module = "feed_forward";
  f.gate_proj = "w1";
  f.up_proj = "w3";
  f.down_proj = "w2";
  // LFM2-MoE: after the first num_dense_layers (their MLP intermediate_size wide, not adjusted), experts chosen by
  // sigmoid scores plus a correction bias (expert_bias, under use_expert_bias), renormalized (their sum plus 1e-6)
  // and scaled by routed_scaling_factor.
  ModelFamily moe = f;
  moe.model_type = "lfm2_moe";
  moe.read_keys = [](const json& j, ModelConfig& c) { read_lfm_keys(j, c, false, false); };
  moe.write_keys = [](const ModelConfig& c, json& j) { write_lfm_keys(c, j, false, false); };
  moe.sizes.intermediate = "intermediate_size";
  ExpertTraits& e = moe.experts;
  e.present = e.normalized_by_default = e.scaled = true;
  e.experts_key = "num_experts";
  e.default_experts = 32;
  e.default_per_token = 4;
  e.default_size = 1792;
  e.layers = MoeLayerRule::kFirstDense;
  e.first_dense_key = "num_dense_layers";
  e.default_first_dense = 2;
  e.scores = RouterScores::kSigmoid;
  e.norm_epsilon = 1e-6;
  e.router = "feed_forward.gate.weight";
  e.gate = "feed_forward.experts.{}.w1.weight";
  e.up = "feed_forward.experts.{}.w3.weight";
  e.down = "feed_forward.experts.{}.w2.weight";
  e.correction_bias = "feed_forward.expert_bias";
  e.correction_bias_key = "use_expert_bias";
  // LFM3: LFM2's layers and names with sliding-attention layers too, Qwen 3's attention names (q_norm, k_norm, o_proj)
  // with a sigmoid gate per head (gate_proj), sandwich norms (post_operator_norm, post_ffn_norm), the MLP as wide as
  // intermediate_size, and a rope by layer type (by default: sliding layers 10,000; full ones proportional, 1e6,
  // half of each head).
  ModelFamily lfm3 = f;
  lfm3.model_type = "lfm3";
  lfm3.attention_bias_on_o = true;
  lfm3.read_keys = [](const json& j, ModelConfig& c) { read_lfm_keys(j, c, false, true); };
  lfm3.write_keys = [](const ModelConfig& c, json& j) { write_lfm_keys(c, j, false, true); };
  lfm3.default_head_dim = 128;
  lfm3.sizes.intermediate = "intermediate_size";
  lfm3.q_norm = "q_norm";
  lfm3.k_norm = "k_norm";
  lfm3.o_proj = "o_proj";
  lfm3.mixer_out_norm = "post_operator_norm";
  lfm3.sandwich_pre_mlp_norm = "ffn_norm";
  lfm3.sandwich_mlp_out_norm = "post_ffn_norm";
  lfm3.default_rope_scaling =
      R"({"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}, "full_attention": {"rope_type": )"
      R"("proportional", "rope_theta": 1000000.0, "partial_rotary_factor": 0.5}})";
  lfm3.synthetic_shapes = {{"lfm3-1.7b", lfm3_1_7b}};
  moe.synthetic_shapes = {{"lfm2-8b-a1b", lfm2_8b_a1b}};
  f.synthetic_shapes = {{"lfm2-1.2b", lfm2_1_2b}};
  return {f, moe, lfm3};
}

}  // namespace prefix_scorer::families
