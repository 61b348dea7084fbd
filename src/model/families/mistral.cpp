// Mistral, and Ministral 3 (mistral with YaRN by default and Llama 4's query scale by position).

#include "model/families/families.h"

namespace prefix_scorer::families {

std::vector<ModelFamily> mistral() {
  ModelFamily mistral = base("mistral");
  mistral.always_windowed = true;
  mistral.multimodal_wrapper = "mistral3";  // Mistral Small 3.x; Ministral 3's text_config names ministral3
  ModelFamily ministral3 = mistral;
  ministral3.model_type = "ministral3";
  ministral3.default_eps = 1e-5;
  ministral3.default_head_dim = 128;
  ministral3.multimodal_wrapper = nullptr;
  ministral3.query_scale_by_position = true;
  ministral3.default_rope_scaling = R"({"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 16.0,
      "original_max_position_embeddings": 16384, "beta_fast": 32.0, "beta_slow": 1.0, "mscale_all_dim": 1.0,
      "mscale": 1.0, "llama_4_scaling_beta": 0.1})";
  return {mistral, ministral3};
}

}  // namespace prefix_scorer::families
