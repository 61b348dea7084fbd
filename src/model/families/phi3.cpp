// Phi-3 and Phi-4-mini: q, k, v fused in qkv_proj and gate, up in gate_up_proj; LongRoPE, its keys partly at the
// top level of config.json (original_max_position_embeddings, partial_rotary_factor), su and yarn its old names.

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {

namespace {

using nlohmann::json;

// Phi-3 keys: longrope from `original` positions on (factors shaped like the released ones: near 1 when short,
// growing with the wavelength when long), a share of each head rotated.
void phi3_keys(json& j, int64_t original, double partial_rotary_factor) {
  const auto rotary = static_cast<int64_t>(j["head_dim"].get<double>() * partial_rotary_factor);
  std::vector<double> short_factor, long_factor;
  for (int64_t i = 0; i < rotary / 2; ++i) {
    const double x = static_cast<double>(i) / static_cast<double>(rotary / 2);
    short_factor.push_back(1.0 + 0.1 * x);
    long_factor.push_back(1.0 + 30.0 * x * x);
  }
  j.update({{"model_type", "phi3"}, {"tie_word_embeddings", false}, {"original_max_position_embeddings", original},
            {"partial_rotary_factor", partial_rotary_factor},
            {"rope_scaling", {{"type", "longrope"}, {"short_factor", short_factor}, {"long_factor", long_factor}}}});
}

// tiny's sizes as phi3: longrope from 64 tokens on, 3/4 of each head rotated
json tiny_phi3() {
  json j = tiny_shape("llama");
  phi3_keys(j, 64, 0.75);
  return j;
}

// Phi-3-mini-128k-instruct
json phi3_mini() {
  json j = shape("phi3", 32064, 3072, 8192, 32, 32, 32, 96, 131072);
  phi3_keys(j, 4096, 1.0);
  return j;
}

}  // namespace

std::vector<ModelFamily> phi3() {
  ModelFamily phi3 = base("phi3");
  phi3.default_eps = 1e-5;
  phi3.fused_projections = phi3.always_windowed = phi3.rope_keys_at_top_level = true;
  phi3.fused_qkv = "qkv_proj";
  phi3.synthetic_shapes = {{"tiny-phi3", tiny_phi3}, {"phi3-mini", phi3_mini}};
  return {phi3};
}

}  // namespace prefix_scorer::families
