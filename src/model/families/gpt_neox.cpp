// GPT-NeoX (Pythia): q, k and v fused by head, attention biases from attention_bias (true by default) and MLP
// biases always, attention and MLP in parallel on their own LayerNorms unless use_parallel_residual is false, a
// quarter of each head rotated (rotary_pct), rope_theta as rotary_emb_base; its own checkpoint names throughout.

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {

namespace {

using nlohmann::json;

// EleutherAI/pythia-1b as its config.json publishes it
json pythia_1b() {
  json j = shape("gpt_neox", 50304, 2048, 8192, 16, 8, 8, 256, 2048);
  j.update({{"layer_norm_eps", 1e-5}, {"rotary_pct", 0.25}, {"rotary_emb_base", 10000}, {"hidden_act", "gelu"},
            {"use_parallel_residual", true}, {"tie_word_embeddings", false}});
  return j;
}

}  // namespace

std::vector<ModelFamily> gpt_neox() {
  ModelFamily f = base("gpt_neox");
  f.default_activation = Activation::kGelu;
  f.layer_norm = f.attention_bias_default = f.attention_bias_on_o = f.always_mlp_bias = true;
  f.default_eps = 1e-5;
  f.eps_key = "layer_norm_eps";
  f.mlp_up = "dense_h_to_4h";
  f.mlp_down = "dense_4h_to_h";
  f.o_proj = "dense";
  f.embed = "gpt_neox.embed_in";
  f.layers = "gpt_neox.layers";
  f.attn = "attention";
  f.final_norm = "gpt_neox.final_layer_norm";
  f.lm_head = "embed_out";
  f.qkv_by_head = "query_key_value";
  f.parallel_residual_key = "use_parallel_residual";
  f.partial_rotary_key = "rotary_pct";
  f.default_partial_rotary = 0.25;
  f.theta_key = "rotary_emb_base";
  f.synthetic_shapes = {{"pythia-1b", pythia_1b}};
  return {f};
}

}  // namespace prefix_scorer::families
