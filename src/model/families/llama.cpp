// Llama (1 to 3.x): the base every family starts from, with o's bias from attention_bias and mlp_bias read.

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {

namespace {

using nlohmann::json;

// Llama's tiny shape, the default model: 4 layers of 4 heads of 32, 2 KV heads, tied
json tiny() { return tiny_shape("llama"); }

// A larger random model for the benchmarks: 6 layers of 8 heads of 64, 2 KV heads, tied
json small() {
  json j = shape("llama", 8192, 512, 1536, 6, 8, 2, 64, 4096);
  j["tie_word_embeddings"] = true;
  return j;
}

// Llama-3.2-1B and Llama-3.1-8B
json llama3(bool big) {
  json j = big ? shape("llama", 128256, 4096, 14336, 32, 32, 8, 128, 131072)
               : shape("llama", 128256, 2048, 8192, 16, 32, 8, 64, 131072);
  j.update({{"tie_word_embeddings", !big}, {"rope_theta", 500000.0},
            {"rope_scaling", {{"rope_type", "llama3"}, {"factor", big ? 8.0 : 32.0}, {"low_freq_factor", 1.0},
                              {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 8192}}}});
  return j;
}

}  // namespace

std::vector<ModelFamily> llama() {
  ModelFamily llama = base("llama");
  llama.attention_bias_on_o = llama.reads_mlp_bias = true;
  llama.synthetic_shapes = {{"tiny", tiny}, {"small", small}, {"llama-1b", [] { return llama3(false); }},
                            {"llama-8b", [] { return llama3(true); }}};
  return {llama};
}

}  // namespace prefix_scorer::families
