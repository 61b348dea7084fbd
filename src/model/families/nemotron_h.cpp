// Nemotron-H (NVIDIA's hybrids: Nemotron-H, Nemotron Nano 2): layers of one block each on one norm (norm), the
// block a Mamba2 mixer, attention without rope or biases, or an ungated relu2 MLP (up_proj, down_proj), all under
// `mixer`; RMSNorm weights multiplied in fp32; checkpoints named as released (backbone.embeddings,
// backbone.layers.N, backbone.norm_f); the output layer never tied. Its expert layers: DeepSeek V3's router (sigmoid
// scores plus a correction bias, in fp32, within the best groups, renormalized and scaled) over experts without a
// gate (relu2 of up, then down), saved one by one, optionally through latent projections (fc1_latent_proj,
// fc2_latent_proj), beside one shared MLP of moe_shared_expert_intermediate_size.

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

// The layer types: layers_block_type (or its alias layer_types; mamba and attention as the older names of
// linear_attention and full_attention), else hybrid_override_pattern's letters, else transformers' default.
std::vector<std::string> layer_types(const json& j) {
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

// NemotronHConfig's keys: one block a layer (a Mamba2 mixer, attention without rope or biases, or an ungated MLP),
// the Mamba2 sizes under their names or their older mamba_ ones (mamba_num_heads, mamba_head_dim, ssm_state_size,
// n_groups, conv_kernel, chunk_size, use_conv_bias, use_bias), dt clamped below at time_step_min (time_step_limit
// unread), the output layer never tied.
void read_nemotron_keys(const json& j, ModelConfig& c) {
  c.mixer_only_layers = true;
  for (const std::string& type : layer_types(j)) {
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

void write_nemotron_keys(const ModelConfig& c, json& j) {
  j.update({{"mamba_num_heads", c.mamba_heads}, {"mamba_head_dim", c.mamba_head_dim},
            {"ssm_state_size", c.mamba_state_size}, {"n_groups", c.mamba_groups}, {"conv_kernel", c.mamba_taps},
            {"chunk_size", c.mamba_chunk}, {"use_conv_bias", c.mamba_conv_bias}, {"use_bias", c.mamba_proj_bias},
            {"time_step_min", c.mamba_dt_min}, {"mamba_hidden_act", "silu"}});
  json types = json::array();
  for (int64_t i = 0; i < c.num_layers; ++i)
    types.push_back(c.is_mamba(i)         ? "linear_attention"
                    : c.is_moe_layer(i)   ? "moe"
                    : c.is_mlp_only(i)    ? "mlp"
                                          : "full_attention");
  j["layers_block_type"] = types;
  j["moe_latent_size"] = c.moe_latent_size > 0 ? json(c.moe_latent_size) : json();
  j["moe_shared_expert_intermediate_size"] = c.shared_expert_intermediate_size;
}

}  // namespace

namespace {

// nvidia/Nemotron-H-8B-Base-8K: 24 Mamba2, 4 attention and 24 MLP layers
json nemotron_h_8b() {
  json j = shape("nemotron_h", 131072, 4096, 21504, 52, 32, 8, 128, 8192);
  j.erase("rms_norm_eps");
  j.update({{"layer_norm_epsilon", 1e-5}, {"hybrid_override_pattern", "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-"},
            {"mamba_num_heads", 128}, {"mamba_head_dim", 64}, {"ssm_state_size", 128}, {"n_groups", 8},
            {"conv_kernel", 4}, {"chunk_size", 128}, {"mlp_hidden_act", "relu2"}});
  return j;
}

}  // namespace

std::vector<ModelFamily> nemotron_h() {
  ModelFamily f = base("nemotron_h");
  // Its layer kinds give the number of layers.
  f.prepare_keys = [](json& j) { j["num_hidden_layers"] = static_cast<int64_t>(layer_types(j).size()); };
  f.read_keys = read_nemotron_keys;
  f.write_keys = write_nemotron_keys;
  f.norm_in_fp32 = f.reads_mlp_bias = true;
  f.activation_key = "mlp_hidden_act";
  f.default_activation = Activation::kRelu2;
  f.eps_key = "layer_norm_epsilon";
  f.default_head_dim = 128;
  f.default_eps = 1e-5;
  f.embed = "backbone.embeddings";
  f.layers = "backbone.layers";
  f.final_norm = "backbone.norm_f";
  f.input_norm = "norm";
  f.attn = f.mamba_module = f.mlp_module = "mixer";
  f.mlp_up = "up_proj";
  f.mlp_down = "down_proj";
  ExpertTraits& e = f.experts;
  deepseek_router(e);
  e.layers = MoeLayerRule::kAll;  // the expert layers are those the layer kinds name
  e.shared_count_key = nullptr;   // one shared MLP of its own width
  e.ungated = true;
  e.experts_key = "n_routed_experts";
  e.default_experts = 8;
  e.default_per_token = 2;
  e.default_size = 7688;
  e.router = "mixer.gate.weight";
  e.correction_bias = "mixer.gate.e_score_correction_bias";
  e.up = "mixer.experts.{}.up_proj.weight";
  e.down = "mixer.experts.{}.down_proj.weight";
  e.shared = "mixer.shared_experts";
  e.latent_in = "mixer.fc1_latent_proj";
  e.latent_out = "mixer.fc2_latent_proj";
  f.synthetic_shapes = {{"nemotron-h-8b", nemotron_h_8b}};
  return {f};
}

}  // namespace prefix_scorer::families
