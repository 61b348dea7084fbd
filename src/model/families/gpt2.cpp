// GPT-2: its own config keys (n_embd, n_layer, ...), learned absolute positions instead of rope, every projection
// stored [in, out] as Conv1D saves it, q/k/v fused in c_attn, LayerNorms ln_1, ln_2 and ln_f.

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {

namespace {

using nlohmann::json;

// openai-community/gpt2 (124M)
json gpt2() {
  json j = shape("gpt2", 50257, 768, 3072, 12, 12, 12, 64, 1024);
  j.update({{"layer_norm_epsilon", 1e-5}, {"activation_function", "gelu_new"}, {"tie_word_embeddings", true}});
  return j;
}

}  // namespace

std::vector<ModelFamily> gpt2() {
  ModelFamily f = base("gpt2");
  f.sizes = {"n_embd", "n_inner", "n_layer", "n_head", "n_positions", 4};
  f.activation_key = "activation_function";
  f.default_activation = Activation::kGeluTanh;  // gelu_new
  f.tied_by_default = f.layer_norm = f.always_biased = f.conv1d_weights = true;
  f.default_eps = 1e-5;
  f.eps_key = "layer_norm_epsilon";
  f.embed = "transformer.wte";
  f.position_embed = "transformer.wpe";
  f.layers = "transformer.h";
  f.attn = "attn";
  f.input_norm = "ln_1";
  f.post_norm = "ln_2";
  f.fused_qkv = "c_attn";
  f.o_proj = "c_proj";
  f.mlp_up = "c_fc";
  f.mlp_down = "c_proj";
  f.final_norm = "transformer.ln_f";
  f.synthetic_shapes = {{"gpt2", gpt2}};
  return {f};
}

}  // namespace prefix_scorer::families
