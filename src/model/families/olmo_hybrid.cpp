// OLMo hybrid: OLMo 3's attention layers (norms after attention and MLP, q and k normed over the whole projection,
// no window, no rope as released) between Gated DeltaNet layers normed before their blocks, with their own
// projection names and q, k and v convolved apart, beta doubled (negative eigenvalues) and an output norm of
// epsilon 1e-5.

#include "model/config/config_json.h"
#include "model/families/families.h"
#include "model/families/gated_deltanet_keys.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace prefix_scorer::families {
namespace {

using config_json::get_or;
using config_json::has_field;
using config_json::json;

// OlmoHybridConfig's keys: the DeltaNet's sizes default to the attention's (its heads, keys 3/4 of the hidden width,
// values twice as wide), the last layer attends, beta doubled under linear_allow_neg_eigval (on by default); no rope
// where rope_theta is null (as released), in rope_parameters or beside a null one.
void read_olmo_hybrid_keys(const json& j, ModelConfig& c) {
  DeltaNetDefaults d;
  d.key_heads = d.value_heads = c.num_heads;
  const int64_t key_heads = get_or<int64_t>(j, "linear_num_key_heads", d.key_heads);
  d.key_head_dim = key_heads > 0 ? 3 * c.hidden_size / (4 * key_heads) : 128;
  d.value_head_dim = 2 * get_or<int64_t>(j, "linear_key_head_dim", d.key_head_dim);
  d.last_layer_attention = true;
  read_gated_deltanet(j, c, d);
  c.linear_beta_scale = get_or<bool>(j, "linear_allow_neg_eigval", true) ? 2 : 1;
  c.linear_norm_eps = 1e-5;
  c.recurrent_layers_pre_norm = true;
  auto null_at = [](const json& dict, const char* key) { return dict.contains(key) && dict[key].is_null(); };
  const bool rope = has_field(j, "rope_parameters") ? !null_at(j["rope_parameters"], "rope_theta")
                                                    : !null_at(j, "rope_theta");
  if (!rope) c.rope_layers.assign(c.num_layers, false);
}

void write_olmo_hybrid_keys(const ModelConfig& c, json& j) {
  write_gated_deltanet(c, j);
  j["linear_allow_neg_eigval"] = c.linear_beta_scale == 2;
  if (!c.rope_layers.empty() && std::none_of(c.rope_layers.begin(), c.rope_layers.end(), [](bool r) { return r; }))
    j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", nullptr}};
}

}  // namespace

namespace {

// transformers' OlmoHybridConfig defaults, without rope as released
json olmo_hybrid_7b() {
  json j = shape("olmo_hybrid", 100352, 3840, 11008, 32, 30, 30, 128, 65536);
  j.erase("head_dim");
  j.update({{"tie_word_embeddings", false}, {"rms_norm_eps", 1e-6},
            {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", nullptr}}}});
  return j;
}

}  // namespace

std::vector<ModelFamily> olmo_hybrid() {
  ModelFamily f = base("olmo_hybrid");
  f.attention_bias_on_o = f.qk_norm_full_width = f.output_norms_only = f.norm_in_fp32 = true;
  f.deltanet = DeltaNetLayout::kSeparateQkv;
  f.read_keys = read_olmo_hybrid_keys;
  f.write_keys = write_olmo_hybrid_keys;
  // As released (OLMo-core's names, which transformers saves back): every layer's post-attention norm, before the
  // MLP or on the attention's output, is feedforward_layer_norm.
  f.input_norm = "attention_layer_norm";
  f.post_norm = "feedforward_layer_norm";
  f.synthetic_shapes = {{"olmo-hybrid-7b", olmo_hybrid_7b}};
  return {f};
}

}  // namespace prefix_scorer::families
