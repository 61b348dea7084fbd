// Gemma 1 to 3: RMSNorm scaling by (1 + w) in fp32, embeddings times sqrt(hidden_size), tanh GELU, heads of 256,
// tied embeddings; Gemma 2 and 3 add norms around attention and the MLP and windows on all but every period-th
// layer (Gemma 2 soft-caps, Gemma 3 normalizes q and k and gives its sliding layers a rope of their own; Gemma 4
// below).

#include "model/families/families.h"

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
  gemma4.norm_in_fp32 = gemma4.qk_norm = gemma4.gemma4_keys = true;
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
  unified.per_layer_inputs_and_experts = false;
  unified.windows.default_window = 1024;
  return {gemma, gemma2, gemma3, gemma4, unified};
}

}  // namespace prefix_scorer::families
