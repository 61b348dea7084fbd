// Nemotron-H (NVIDIA's hybrids: Nemotron-H, Nemotron Nano 2): layers of one block each on one norm (norm), the
// block a Mamba2 mixer, attention without rope or biases, or an ungated relu2 MLP (up_proj, down_proj), all under
// `mixer`; RMSNorm weights multiplied in fp32; checkpoints named as released (backbone.embeddings,
// backbone.layers.N, backbone.norm_f); the output layer never tied. Its expert layers: DeepSeek V3's router (sigmoid
// scores plus a correction bias, in fp32, within the best groups, renormalized and scaled) over experts without a
// gate (relu2 of up, then down), saved one by one, optionally through latent projections (fc1_latent_proj,
// fc2_latent_proj), beside one shared MLP of moe_shared_expert_intermediate_size.

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
  return {f};
}

}  // namespace prefix_scorer::families
