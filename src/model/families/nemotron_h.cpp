// Nemotron-H (NVIDIA's hybrids: Nemotron-H, Nemotron Nano 2): layers of one block each on one norm (norm), the
// block a Mamba2 mixer, attention without rope or biases, or an ungated relu2 MLP (up_proj, down_proj), all under
// `mixer`; RMSNorm weights multiplied in fp32; checkpoints named as released (backbone.embeddings,
// backbone.layers.N, backbone.norm_f); the output layer never tied.

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> nemotron_h() {
  ModelFamily f = base("nemotron_h");
  f.mamba2 = Mamba2Keys::kNemotronH;
  f.norm_in_fp32 = f.reads_mlp_bias = true;
  f.activation_key = "mlp_hidden_act";
  f.default_activation = Activation::kRelu2;
  f.eps_key = "layer_norm_epsilon";
  f.default_head_dim = 128;
  f.embed = "backbone.embeddings";
  f.layers = "backbone.layers";
  f.final_norm = "backbone.norm_f";
  f.input_norm = "norm";
  f.attn = f.mamba_module = f.mlp_module = "mixer";
  f.mlp_up = "up_proj";
  f.mlp_down = "down_proj";
  return {f};
}

}  // namespace prefix_scorer::families
