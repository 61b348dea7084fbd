// MiniMax M3's text model (minimax_m3_vl_text; inside the minimax_m3_vl wrapper, as released): Gemma's (1 + w)
// RMSNorms in fp32, per-head q/k norms of that kind before the rotation, each head
// rotated whole unless rope_parameters' partial_rotary_factor says otherwise (transformers 5.24 reads rotary_dim for
// nothing here, unlike MiniMax-M2's).
// Dense layers (mlp_layer_types' "dense", dense_intermediate_size wide) and the shared experts
// (shared_intermediate_size) gate by the clamped SwiGLU, as the routed experts do (intermediate_size wide, saved
// as Mixtral's under block_sparse_moe, as transformers saves them); the routed layers choose by sigmoid scores plus a correction bias, weigh by
// the scores renormalized, scale the experts' sum by routed_scaling_factor and add the shared experts. The sparse
// layers (layer_types' minimax_m3_sparse) attend through a lightning indexer to index_topk_blocks blocks of
// index_block_size keys: dense attention while a query sees at most that many keys, served so, longer inputs refused
// by name, the indexer never read (its parameters counted). Older configs' sparse_attention_config and
// moe_layer_freq are read as transformers reads them; multi-token-prediction layers (mtp.*) are never read.

#include "model/config/config_json.h"
#include "model/families/families.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace prefix_scorer::families {
namespace {

using config_json::check_layer_type;
using config_json::get_or;
using config_json::has_field;
using config_json::json;
using config_json::object_at;

// MiniMaxM3VLTextConfig's __post_init__: the older keys moved to their flat names, hidden_act as silu (the clamped
// SwiGLU is computed from swiglu_alpha and swiglu_limit, whatever the checkpoint declares).
void prepare_minimax_m3_keys(json& j) {
  j["hidden_act"] = "silu";
  if (const json* sparse = object_at(j, "sparse_attention_config")) {
    const std::pair<const char*, const char*> renamed[] = {
        {"index_n_heads", "sparse_num_index_heads"}, {"index_head_dim", "sparse_index_dim"},
        {"index_block_size", "sparse_block_size"},   {"index_topk_blocks", "sparse_topk_blocks"},
        {"index_local_blocks", "sparse_local_block"}};
    for (const auto& [flat, legacy] : renamed)
      if (sparse->contains(legacy)) j[flat] = (*sparse)[legacy];
    if (!has_field(j, "layer_types") && sparse->contains("sparse_attention_freq")) {
      json types = json::array();
      for (const json& sparse_layer : (*sparse)["sparse_attention_freq"])
        types.push_back(sparse_layer.get<int64_t>() != 0 ? "minimax_m3_sparse" : "full_attention");
      j["layer_types"] = types;
    }
  }
  if (!has_field(j, "mlp_layer_types") && j.contains("moe_layer_freq") && j["moe_layer_freq"].is_array()) {
    json types = json::array();
    for (const json& moe : j["moe_layer_freq"]) types.push_back(moe.get<int64_t>() != 0 ? "sparse" : "dense");
    j["mlp_layer_types"] = types;
  }
  j.erase("sparse_attention_config");
  j.erase("moe_layer_freq");
}

void read_minimax_m3_keys(const json& j, ModelConfig& c) {
  c.intermediate_size = get_or<int64_t>(j, "dense_intermediate_size", 12288);
  c.moe_intermediate_size = get_or<int64_t>(j, "intermediate_size", 3072);
  c.shared_expert_intermediate_size = get_or<int64_t>(j, "shared_intermediate_size", 3072);
  c.clamped_swiglu_mlps = true;
  const auto types = get_or<std::vector<std::string>>(j, "layer_types", {});
  if (!types.empty() && static_cast<int64_t>(types.size()) != c.num_layers)
    throw std::invalid_argument(
        fmt::format("config.json: layer_types has {} entries for {} layers", types.size(), c.num_layers));
  bool sparse = false;
  for (const std::string& type : types) {
    check_layer_type(type, {"full_attention", "minimax_m3_sparse"});
    sparse = sparse || type == "minimax_m3_sparse";
  }
  if (!sparse) return;
  const int64_t blocks = get_or<int64_t>(j, "index_topk_blocks", 16), size = get_or<int64_t>(j, "index_block_size", 128);
  if (blocks < 1 || size < 1)
    throw std::invalid_argument(
        fmt::format("config.json: index_topk_blocks {} and index_block_size {} must be >= 1", blocks, size));
  c.dense_attention_limit = blocks * size;
  c.dense_attention_limit_key = "index_topk_blocks x index_block_size";
}

// The sparse layers written as all of them, one block as long as the limit: the same dense attention up to it.
void write_minimax_m3_keys(const ModelConfig& c, json& j) {
  j["dense_intermediate_size"] = c.intermediate_size;
  j["intermediate_size"] = c.moe_intermediate_size;
  j["shared_intermediate_size"] = c.shared_expert_intermediate_size;
  j["layer_types"] = std::vector<std::string>(c.num_layers, c.dense_attention_limit > 0 ? "minimax_m3_sparse"
                                                                                       : "full_attention");
  if (c.dense_attention_limit > 0) {
    j["index_block_size"] = c.dense_attention_limit;
    j["index_topk_blocks"] = 1;
  }
}

}  // namespace

std::vector<ModelFamily> minimax_m3() {
  ModelFamily f = base("minimax_m3_vl_text");
  f.multimodal_wrapper = "minimax_m3_vl";
  f.sizes.intermediate = nullptr;  // the dense, expert and shared widths, with transformers' defaults, in read_keys
  f.default_head_dim = 128;
  f.default_rope_theta = 5000000.0;
  f.qk_norm = f.norm_plus_one = true;
  f.indexer = "self_attn.index_";  // index_q_proj, index_k_proj and their norms
  f.prepare_keys = prepare_minimax_m3_keys;
  f.read_keys = read_minimax_m3_keys;
  f.write_keys = write_minimax_m3_keys;
  ExpertTraits& e = f.experts;
  e.present = e.always_normalized = e.scaled = e.scaled_after_sum = e.clamped_swiglu = true;
  e.shared_behind_gate = false;
  e.scores = RouterScores::kSigmoid;
  e.default_experts = 128;
  e.default_per_token = 4;
  e.default_scaling = 2.0;
  e.layers = MoeLayerRule::kMlpLayerTypes;
  e.first_dense_key = nullptr;  // all routed without mlp_layer_types
  name_mixtral_experts(e);
  e.correction_bias = "block_sparse_moe.e_score_correction_bias";
  e.shared = "block_sparse_moe.shared_experts";
  return {f};
}

}  // namespace prefix_scorer::families
