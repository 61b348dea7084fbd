// Mistral 4 (mistral4; released inside the mistral3 multimodal wrapper): DeepSeek V3's latent attention with Llama 4's
// query scale by position, YaRN by default; every layer routed by a softmax over all experts in the model dtype
// within the best n_group groups, beside a shared expert, without a correction bias; the experts stacked.

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {

namespace {

using nlohmann::json;

// transformers' Mistral4Config defaults (Mistral Small 4's text model)
json mistral_small_4() {
  json j = shape("mistral4", 131072, 4096, 12288, 36, 32, 32, 128, 1048576);
  j.update({{"tie_word_embeddings", false}, {"rms_norm_eps", 1e-6}});
  return j;
}

}  // namespace

std::vector<ModelFamily> mistral4() {
  ModelFamily f = base("mistral4");
  f.latent = {256, 1024, 64, 64, 128};
  f.attention_bias_on_o = true;
  f.query_scale_by_position = true;
  f.default_rope_scaling = R"({"rope_type": "yarn", "rope_theta": 10000.0, "factor": 128.0,
      "original_max_position_embeddings": 8192, "beta_fast": 32.0, "beta_slow": 1.0, "mscale_all_dim": 1.0,
      "mscale": 1.0, "llama_4_scaling_beta": 0.1})";
  ExpertTraits& e = f.experts;
  e.present = e.normalized_by_default = e.grouped = e.scaled = true;
  e.scores = RouterScores::kSoftmaxInDtype;
  e.norm_epsilon = 1e-20;
  e.layers = MoeLayerRule::kFirstDense;
  e.shared_count_key = "n_shared_experts";
  e.experts_key = "n_routed_experts";
  e.default_experts = 128;
  e.default_per_token = 4;
  e.default_size = 2048;
  e.default_first_dense = 0;
  e.default_shared_count = 1;
  e.router = "mlp.gate.weight";
  e.gate_up_rows = true;  // as transformers saves them: gate_up_proj [experts, 2 x ff, hidden], down_proj
  e.gate = "mlp.experts.gate_up_proj";
  e.down = "mlp.experts.down_proj";
  e.shared = "mlp.shared_experts";
  f.synthetic_shapes = {{"mistral-small-4", mistral_small_4}};
  return {f};
}

}  // namespace prefix_scorer::families
