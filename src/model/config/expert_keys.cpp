#include "model/config/expert_keys.h"

#include "model/config/config_json.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace prefix_scorer {
namespace {

using config_json::check_layer_type;
using config_json::get_or;
using config_json::has_field;
using config_json::json;

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

}  // namespace

void read_experts(const json& j, const ExpertTraits& e, ModelConfig& c) {
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

void write_experts(const ModelConfig& c, const ExpertTraits& e, json& j) {
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

}  // namespace prefix_scorer
