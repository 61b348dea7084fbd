// Gemma 1 to 3: RMSNorm scaling by (1 + w) in fp32, embeddings times sqrt(hidden_size), tanh GELU, heads of 256,
// tied embeddings; Gemma 2 and 3 add norms around attention and the MLP and windows on all but every period-th
// layer (Gemma 2 soft-caps, Gemma 3 normalizes q and k and gives its sliding layers a rope of their own; Gemma 4
// below).

#include "model/config/config_json.h"
#include "model/families/families.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

namespace prefix_scorer::families {
namespace {

ModelFamily gemma_base(const char* model_type) {
  ModelFamily f = base(model_type);
  f.default_activation = Activation::kGeluTanh;
  f.default_head_dim = 256;
  f.tied_by_default = f.attention_bias_on_o = f.norm_plus_one = f.scale_embeddings = true;
  return f;
}

ModelFamily gemma_windowed(const char* model_type, AlternatingWindows windows) {
  ModelFamily f = gemma_base(model_type);
  f.activation_key = "hidden_activation";
  f.sandwich_norms = true;
  f.default_query_pre_attn_scalar = 256;
  f.windows = windows;
  return f;
}

using config_json::get_or;
using config_json::json;
using config_json::object_at;
using config_json::per_layer_index;
using config_json::require;

// Gemma 4's keys: layer shapes (global_head_dim, num_global_key_value_heads, or per_layer_config as transformers 5
// saves them), attention_k_eq_v, num_kv_shared_layers, use_double_wide_mlp and, with `extras`, the per-layer inputs
// (hidden_size_per_layer_input, vocab_size_per_layer_input) and the MoE block; values normed, a scalar per layer,
// attention scores unscaled, the last layer always full attention.
void read_gemma4_keys(const json& j, ModelConfig& c, bool extras) {
  if (extras && get_or<bool>(j, "enable_moe_block", false)) {
    c.experts_beside_mlp = c.norm_topk_prob = c.routing_weights_fp32 = true;
    c.num_experts = require<int64_t>(j, "num_experts");
    c.experts_per_token = require<int64_t>(j, "top_k_experts");
    c.moe_intermediate_size = require<int64_t>(j, "moe_intermediate_size");
  }
  c.attention_multiplier = 1.0;  // scores unscaled: q and k are normed instead
  c.value_norm = c.layer_scalars = true;
  c.keys_as_values = get_or<bool>(j, "attention_k_eq_v", false);
  c.kv_shared_layers = get_or<int64_t>(j, "num_kv_shared_layers", 0);
  c.double_wide_shared_mlp = get_or<bool>(j, "use_double_wide_mlp", false);
  c.per_layer_input_size = extras ? get_or<int64_t>(j, "hidden_size_per_layer_input", 256) : 0;
  if (c.per_layer_input_size > 0) c.per_layer_vocab = get_or<int64_t>(j, "vocab_size_per_layer_input", 262144);
  if (!c.layer_kinds.empty()) c.layer_kinds.back() = LayerKind::kFullAttention;
  c.layer_head_dims.assign(std::max<int64_t>(c.num_layers, 0), 0);
  c.layer_kv_heads.assign(std::max<int64_t>(c.num_layers, 0), 0);
  if (const json* per_layer = object_at(j, "per_layer_config")) {
    for (const auto& [key, fields] : per_layer->items()) {
      const int64_t layer = per_layer_index(key, c.num_layers);
      if (!fields.is_object())
        throw std::invalid_argument(fmt::format("config.json: per_layer_config of layer {} is not an object", layer));
      for (const auto& [name, value] : fields.items()) {
        const std::string what = fmt::format("config.json: per_layer_config of layer {}: '{}'", layer, name);
        if (name == "head_dim") {
          c.layer_head_dims[layer] = json_integer(value, what);
        } else if (name == "num_key_value_heads") {
          c.layer_kv_heads[layer] = json_integer(value, what);
        } else {
          throw std::invalid_argument(what + " is not supported (head_dim and num_key_value_heads are)");
        }
      }
    }
    return;
  }
  const int64_t global_head_dim = get_or<int64_t>(j, "global_head_dim", 512);
  const int64_t global_kv_heads = c.keys_as_values ? get_or<int64_t>(j, "num_global_key_value_heads", 0) : 0;
  if (!c.layer_kinds.empty() && static_cast<int64_t>(c.layer_kinds.size()) != c.num_layers)  // before validate() says so
    throw std::invalid_argument(fmt::format("config: layer_types has {} entries for {} layers", c.layer_kinds.size(),
                                            c.num_layers));
  for (int64_t i = 0; i < c.num_layers; ++i) {
    if (c.layer_window(i) > 0) continue;
    c.layer_head_dims[i] = global_head_dim;
    c.layer_kv_heads[i] = global_kv_heads;
  }
}

// Gemma 4's keys as read_gemma4_keys reads them back.
void write_gemma4_keys(const ModelConfig& c, json& j, bool extras) {
  j["attention_k_eq_v"] = c.keys_as_values;
  j["num_kv_shared_layers"] = c.kv_shared_layers;
  j["use_double_wide_mlp"] = c.double_wide_shared_mlp;
  if (extras) {
    j["hidden_size_per_layer_input"] = c.per_layer_input_size;
    j["vocab_size_per_layer_input"] = c.per_layer_input_size > 0 ? c.per_layer_vocab : c.vocab_size;
    j["enable_moe_block"] = c.experts_beside_mlp;
  }
  json per_layer = json::object();
  for (int64_t i = 0; i < c.num_layers; ++i) {
    if (c.layer_head_dim(i) != c.head_dim || c.layer_kv_head_count(i) != c.num_kv_heads)
      per_layer[std::to_string(i)] = {{"head_dim", c.layer_head_dim(i)}, {"num_key_value_heads", c.layer_kv_head_count(i)}};
  }
  j["per_layer_config"] = per_layer;
  if (c.experts_beside_mlp) {
    j["num_experts"] = c.num_experts;
    j["top_k_experts"] = c.experts_per_token;
    j["moe_intermediate_size"] = c.moe_intermediate_size;
  }
}

}  // namespace

namespace {

// Gemma 2 and 3 keys: windows of `window` tokens on all but every `period`-th layer, the query scale of the head.
void gemma_keys(json& j, const char* model_type, int64_t window, int64_t period) {
  j.update({{"model_type", model_type}, {"rms_norm_eps", 1e-6}, {"sliding_window", window},
            {"sliding_window_pattern", period}, {"query_pre_attn_scalar", j["head_dim"]}});
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

// tiny's sizes with Gemma 4's traits: windows of 32, KV shared by the last 2 layers
json tiny_gemma4() {
  json j = shape("gemma4_text", 2048, 128, 384, 6, 4, 2, 32, 4096);
  gemma4_keys(j, 32, 2, 64, 2, 16);
  return j;
}

// google/gemma-4-E2B's text model
json gemma4_e2b() {
  json j = shape("gemma4_text", 262144, 1536, 6144, 35, 8, 1, 256, 131072);
  gemma4_keys(j, 512, 4, 512, 20, 256);
  return j;
}

// tiny's sizes with Gemma 2's traits: windows of 32 on every other layer
json tiny_gemma2() {
  json j = tiny_shape("llama");
  gemma_keys(j, "gemma2", 32, 2);
  return j;
}

// tiny's sizes with Gemma 3's traits: windows of 32 on two layers of three
json tiny_gemma3() {
  json j = tiny_shape("llama");
  gemma_keys(j, "gemma3_text", 32, 3);
  return j;
}

// Llama's tiny shape, the default model: 4 layers of 4 heads of 32, 2 KV heads, tied
json gemma2_2b() {
  json j = shape("gemma2", 256000, 2304, 9216, 26, 8, 4, 256, 8192);
  gemma_keys(j, "gemma2", 4096, 2);
  return j;
}

// Llama's tiny shape, the default model: 4 layers of 4 heads of 32, 2 KV heads, tied
json gemma3_1b() {
  json j = shape("gemma3_text", 262144, 1152, 6912, 26, 4, 1, 256, 32768);
  gemma_keys(j, "gemma3_text", 512, 6);
  return j;
}

}  // namespace

std::vector<ModelFamily> gemma() {
  ModelFamily gemma = gemma_base("gemma");
  gemma.gelu_means_tanh = true;
  ModelFamily gemma2 = gemma_windowed("gemma2", {true, 4096, 2, nullptr, 50.0, 30.0});
  ModelFamily gemma3 = gemma_windowed("gemma3_text", {true, 4096, 6, "sliding_window_pattern", 0.0, 0.0});
  gemma3.qk_norm = gemma3.local_rope_base = true;
  gemma3.default_rope_theta = 1e6;
  gemma3.multimodal_wrapper = "gemma3";  // Gemma 3 from 4B up
  // Gemma 4: RMSNorm by w (not 1 + w) in fp32, q, k and v normed, unscaled scores, full-attention layers with
  // heads of their own and a proportional rope; per-layer inputs and KV sharing in the small models.
  ModelFamily gemma4 = gemma_windowed("gemma4_text", {true, 512, 6, nullptr, 0.0, 0.0});
  gemma4.norm_plus_one = false;
  gemma4.norm_in_fp32 = gemma4.qk_norm = true;
  gemma4.read_keys = [](const json& j, ModelConfig& c) { read_gemma4_keys(j, c, true); };
  gemma4.write_keys = [](const ModelConfig& c, json& j) { write_gemma4_keys(c, j, true); };
  gemma4.default_query_pre_attn_scalar = 0;
  gemma4.default_rope_scaling =
      R"({"full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1000000.0},
          "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}})";
  gemma4.multimodal_wrapper = "gemma4";
  // Gemma 4 12B (gemma4_unified_text, inside gemma4_unified): gemma4_text's layers without per-layer inputs or the
  // MoE block (their keys are not its config's), windows of 1024 by default.
  ModelFamily unified = gemma4;
  unified.model_type = "gemma4_unified_text";
  unified.multimodal_wrapper = "gemma4_unified";
  unified.read_keys = [](const json& j, ModelConfig& c) { read_gemma4_keys(j, c, false); };
  unified.write_keys = [](const ModelConfig& c, json& j) { write_gemma4_keys(c, j, false); };
  unified.windows.default_window = 1024;
  gemma4.synthetic_shapes = {{"tiny-gemma4", tiny_gemma4}, {"gemma4-e2b", gemma4_e2b}};
  gemma2.synthetic_shapes = {{"tiny-gemma2", tiny_gemma2}, {"gemma2-2b", gemma2_2b}};
  gemma3.synthetic_shapes = {{"tiny-gemma3", tiny_gemma3}, {"gemma3-1b", gemma3_1b}};
  return {gemma, gemma2, gemma3, gemma4, unified};
}

}  // namespace prefix_scorer::families
