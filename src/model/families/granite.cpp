// Granite 3: Llama with multipliers of the embeddings, the attention scores and each block's output, and a divisor
// of the logits. Granite 4 (granitemoehybrid): the same multipliers over Mamba2 layers (model.layers.N.mamba.)
// between attention layers without rope (as released), each layer's MLP a shared one (shared_mlp's input_linear,
// gate's rows then up's, and output_linear) beside experts (block_sparse_moe: a softmax over the top logits, in fp32;
// every expert's gate and up stacked by rows in input_linear, down in output_linear), or alone without experts.

#include "model/config/config_json.h"
#include "model/families/families.h"
#include "model/families/mamba2_keys.h"

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

// Granite 4's keys as GraniteMoeHybridConfig reads them: mamba layers from layer_types (mamba or linear_attention;
// attention or full_attention; all mamba when absent), their sizes from the mamba_ keys (the inner width mamba_expand
// times hidden_size), rope only where position_embedding_type is "rope", and the shared MLP
// (shared_intermediate_size wide) beside the experts, or alone where num_local_experts is 0.
void read_hybrid_keys(const json& j, ModelConfig& c) {
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
  read_mamba_keys(j, c, get_or<int64_t>(j, "mamba_expand", 2) * c.hidden_size, "mamba_expand times hidden_size");
  c.mamba_out_bias = c.mamba_proj_bias;
  if (get_or<std::string>(j, "position_embedding_type", "") != "rope")
    c.rope_layers.assign(std::max<int64_t>(c.num_layers, 0), false);
  const int64_t shared = get_or<int64_t>(j, "shared_intermediate_size", 1024);
  if (c.num_experts > 0)
    c.shared_expert_intermediate_size = shared;
  else
    c.intermediate_size = c.moe_intermediate_size = shared;  // experts as wide as intermediate_size, were there any
}

void write_hybrid_keys(const ModelConfig& c, json& j) {
  write_mamba_keys(c, j);
  j["mamba_expand"] = c.mamba_heads * c.mamba_head_dim / c.hidden_size;
  j["shared_intermediate_size"] = c.num_experts > 0 ? c.shared_expert_intermediate_size : c.intermediate_size;
  const bool rope_anywhere =
      c.rope_layers.empty() || std::any_of(c.rope_layers.begin(), c.rope_layers.end(), [](bool r) { return r; });
  j["position_embedding_type"] = rope_anywhere ? "rope" : "nope";
  json types = json::array();
  for (int64_t i = 0; i < c.num_layers; ++i) types.push_back(c.is_mamba(i) ? "mamba" : "attention");
  j["layer_types"] = types;
}

}  // namespace

namespace {

// tiny's sizes with Granite 4's layers: three Mamba2 layers to one attention
json tiny_granite4() {
  json j = shape("granitemoehybrid", 2048, 128, 384, 4, 4, 2, 32, 4096);
  j.update({{"tie_word_embeddings", true}, {"num_local_experts", 0}, {"shared_intermediate_size", 384},
            {"mamba_n_heads", 8}, {"mamba_d_head", 32}, {"mamba_d_state", 32}, {"mamba_n_groups", 1},
            {"mamba_chunk_size", 64}, {"layer_types", {"mamba", "mamba", "mamba", "attention"}}});
  return j;
}

// ibm-granite/granite-4.0-h-tiny's sizes (7B, 1B active): 4 of 40 layers attend
json granite_4_0_h_tiny() {
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

}  // namespace

std::vector<ModelFamily> granite() {
  ModelFamily granite = base("granite");
  granite.attention_bias_on_o = granite.reads_mlp_bias = granite.reads_multipliers = true;
  ModelFamily hybrid = base("granitemoehybrid");
  hybrid.attention_bias_on_o = hybrid.reads_multipliers = true;
  hybrid.read_keys = read_hybrid_keys;
  hybrid.write_keys = write_hybrid_keys;
  hybrid.mlp_module = "shared_mlp";
  hybrid.gate_up_proj = "input_linear";
  hybrid.down_proj = "output_linear";
  ExpertTraits& e = hybrid.experts;
  e.present = e.dense_sized = e.gate_up_rows = true;
  e.experts_key = "num_local_experts";
  e.default_experts = 8;
  e.default_per_token = 2;
  e.scores = RouterScores::kFp32SoftmaxOfChosen;
  e.router = "block_sparse_moe.router.layer.weight";
  e.gate = "block_sparse_moe.input_linear.weight";
  e.down = "block_sparse_moe.output_linear.weight";
  e.shared = "shared_mlp";
  hybrid.synthetic_shapes = {{"tiny-granite4", tiny_granite4}, {"granite-4.0-h-tiny", granite_4_0_h_tiny}};
  return {granite, hybrid};
}

}  // namespace prefix_scorer::families
