// Cohere's Command R and R+ (cohere) and Command A and R7B (cohere2): attention and a gated MLP in parallel on one
// LayerNorm without bias (computed in fp32), biases on q, k, v and o under attention_bias, the rope over
// interleaved pairs (rows reordered at load), the logits times logit_scale, tied embeddings by default. Command R+
// norms q and k per head (use_qk_norm) by LayerNorms with a weight for each head. Cohere 2 has sliding layers
// (every sliding_window_pattern-th full) that alone rotate, none without a window, and heads of hidden_size over
// num_attention_heads whatever head_dim says; sliding layers without a window are refused (transformers' mask
// refuses them). Cohere 2 MoE below.

#include "model/config/config_json.h"
#include "model/families/families.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace prefix_scorer::families {
namespace {

using config_json::get_or;
using config_json::has_field;
using config_json::json;

// Cohere2MoeConfig's own keys: RMSNorms where rms_norm_eps is set (else Cohere's LayerNorms), the router's
// expert_selection_fn (a softmax of the chosen logits in fp32, or their sigmoid, renormalized under norm_topk_prob),
// shared experts averaged with the routed ones or added (shared_expert_combination_strategy), the dense layers'
// width (prefix_dense_intermediate_size), and without layer_types, the first first_k_dense_replace layers sliding but
// every prefix_dense_sliding_window_pattern-th. Every dense layer rotates where that pattern is 1, full or not.
void read_moe_keys(const json& j, ModelConfig& c) {
  if (has_field(j, "rms_norm_eps")) {
    c.layer_norm = c.norm_in_fp32 = false;
    c.rms_norm_eps = get_or<double>(j, "rms_norm_eps", 1e-5);
  }
  const std::string selection = get_or<std::string>(j, "expert_selection_fn", "softmax");
  if (selection != "softmax" && selection != "sigmoid")
    throw std::invalid_argument(fmt::format("config.json: expert_selection_fn '{}' (softmax or sigmoid)", selection));
  c.router_scores = selection == "sigmoid" ? RouterScores::kSigmoidOfChosen : RouterScores::kFp32SoftmaxOfChosen;
  const std::string combination = get_or<std::string>(j, "shared_expert_combination_strategy", "average");
  if (combination != "average" && combination != "sum")
    throw std::invalid_argument(
        fmt::format("config.json: shared_expert_combination_strategy '{}' (average or sum)", combination));
  c.shared_expert_averaged = combination == "average" && c.shared_expert_intermediate_size > 0;
  if (has_field(j, "prefix_dense_intermediate_size"))
    c.intermediate_size = get_or<int64_t>(j, "prefix_dense_intermediate_size", 0);
  const int64_t prefix = get_or<int64_t>(j, "first_k_dense_replace", 0);
  const int64_t prefix_period = get_or<int64_t>(j, "prefix_dense_sliding_window_pattern", 1);
  const int64_t period = get_or<int64_t>(j, "sliding_window_pattern", 4);
  if (prefix_period < 1 || period < 1)
    throw std::invalid_argument(fmt::format(
        "config.json: prefix_dense_sliding_window_pattern {} and sliding_window_pattern {} must be >= 1",
        prefix_period, period));
  if (!has_field(j, "layer_types"))
    for (int64_t i = 0; i < c.num_layers; ++i) {
      const bool sliding = i < prefix ? (i + 1) % prefix_period != 0 : (i - prefix + 1) % period != 0;
      c.layer_kinds[i] = sliding ? LayerKind::kSlidingAttention : LayerKind::kFullAttention;
    }
  c.rope_layers.assign(c.num_layers, false);
  for (int64_t i = 0; i < c.num_layers; ++i)
    c.rope_layers[i] = (c.layer_kinds[i] == LayerKind::kSlidingAttention && c.sliding_window > 0) ||
                       (prefix_period == 1 && !c.is_moe_layer(i));
}

void write_moe_keys(const ModelConfig& c, json& j) {
  j["rms_norm_eps"] = c.layer_norm ? json() : json(c.rms_norm_eps);
  j["expert_selection_fn"] = c.router_scores == RouterScores::kSigmoidOfChosen ? "sigmoid" : "softmax";
  j["shared_expert_combination_strategy"] = c.shared_expert_averaged ? "average" : "sum";
  j["intermediate_size"] = c.moe_intermediate_size;
  j["prefix_dense_intermediate_size"] = c.intermediate_size;
  bool forced_rope = false;  // a dense full-attention layer that rotates: the prefix's pattern is 1
  for (int64_t i = 0; i < c.num_layers; ++i)
    forced_rope = forced_rope || (!c.is_moe_layer(i) && c.layer_kinds[i] == LayerKind::kFullAttention &&
                                  c.layer_uses_rope(i));
  j["prefix_dense_sliding_window_pattern"] = forced_rope ? 1 : 2;
}

// transformers' Cohere2MoeConfig defaults at a tiny size, for tests: 3 layers, the first dense.
json tiny_cohere2_moe() {
  json j = tiny_shape("cohere2_moe");
  j.erase("rms_norm_eps");
  j.update({{"intermediate_size", 96}, {"num_experts", 8}, {"num_experts_per_tok", 2}, {"num_shared_experts", 1},
            {"mlp_layer_types", {"dense", "sparse", "sparse", "sparse"}}, {"sliding_window", 32}});
  return j;
}

}  // namespace

std::vector<ModelFamily> cohere() {
  ModelFamily f = base("cohere");
  f.layer_norm = f.norms_without_bias = f.norm_in_fp32 = f.parallel_block = true;
  f.interleaved_rope = f.tied_by_default = f.attention_bias_on_o = true;
  f.eps_key = "layer_norm_eps";
  f.default_eps = 1e-5;
  f.default_rope_theta = 500000.0;
  f.logit_scale_key = "logit_scale";
  f.default_logit_scale = 0.0625;
  f.qk_norm_key = "use_qk_norm";
  f.qk_norm_weight_per_head = true;
  ModelFamily two = f;
  two.model_type = "cohere2";
  two.qk_norm_key = nullptr;
  two.default_rope_theta = 10000.0;
  two.rope_only_on_sliding = two.rope_needs_window = two.head_dim_from_heads = true;
  two.windows = {true, 4096, 4, "sliding_window_pattern", 0.0, 0.0};
  // Cohere 2 MoE (cohere2_moe): Command A's layers with head_dim as given (128 by default) and tied embeddings; each
  // sparse layer's MLP routed to num_experts_per_tok of num_experts experts as wide as intermediate_size (top logits
  // in the model dtype), beside num_shared_experts experts' widths of shared MLP; the dense layers by mlp_layer_types
  // (else the first first_k_dense_replace).
  ModelFamily moe = two;
  moe.model_type = "cohere2_moe";
  moe.head_dim_from_heads = false;
  moe.default_head_dim = 128;
  ExpertTraits& e = moe.experts;
  e.present = e.dense_sized = e.normalized_by_default = true;
  e.experts_key = "num_experts";
  e.default_experts = 8;
  e.default_per_token = 2;
  e.layers = MoeLayerRule::kMlpLayerTypes;
  e.shared_count_key = "num_shared_experts";
  name_experts(e, "mlp.gate.weight");
  e.shared = "mlp.shared_experts";
  moe.read_keys = read_moe_keys;
  moe.write_keys = write_moe_keys;
  moe.synthetic_shapes = {{"tiny-cohere2-moe", tiny_cohere2_moe}};
  return {f, two, moe};
}

}  // namespace prefix_scorer::families
