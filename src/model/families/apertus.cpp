// Apertus (Swiss AI): an ungated MLP through xIELU with parameters learned per layer, per-head q/k norms, its own
// names for the two norms before attention and the MLP, Llama 3's rope with a base of 12M by default. Apertus 1.5
// (apertus1p5, multimodal: discrete image and audio codes in the vocabulary) scores its text model alone, whose
// output layer may be pruned to the text ids (output_vocab_size): logits over ids below it only.

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {

namespace {

using nlohmann::json;

// swiss-ai/Apertus-8B-2509
json apertus_8b() {
  json j = shape("apertus", 131072, 4096, 21504, 32, 32, 8, 128, 65536);
  j.update({{"tie_word_embeddings", false}});
  return j;
}

}  // namespace

std::vector<ModelFamily> apertus() {
  ModelFamily f = base("apertus");
  f.default_eps = 1e-5;
  f.attention_bias_on_o = f.qk_norm = true;
  f.default_activation = Activation::kXielu;
  f.mlp_up = "up_proj";
  f.mlp_down = "down_proj";
  f.input_norm = "attention_layernorm";
  f.post_norm = "feedforward_layernorm";
  f.default_rope_theta = 12000000.0;
  f.default_rope_scaling =
      R"({"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192, "low_freq_factor": 1.0,
          "high_freq_factor": 4.0})";
  ModelFamily pruned = f;  // Apertus 1.5's text model: a head pruned to the text ids, inside its multimodal wrapper
  pruned.model_type = "apertus1p5_text";
  pruned.multimodal_wrapper = "apertus1p5";
  pruned.output_vocab_key = "output_vocab_size";
  f.synthetic_shapes = {{"apertus-8b", apertus_8b}};
  return {f, pruned};
}

}  // namespace prefix_scorer::families
