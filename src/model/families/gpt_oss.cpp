// gpt-oss: attention sinks, YaRN by default, even layers sliding over 128 tokens; experts stacked in one tensor per
// projection (gate and up interleaved), with biases, routed by a softmax over the chosen logits through a clamped
// SwiGLU; MXFP4 experts dequantized at load.

#include "model/families/families.h"

#include <nlohmann/json.hpp>

namespace prefix_scorer::families {

namespace {

using nlohmann::json;

// openai/gpt-oss-20b (its experts as bf16, not MXFP4)
json gpt_oss_20b() {
  json j = shape("gpt_oss", 201088, 2880, 2880, 24, 64, 8, 64, 131072);
  j.update({{"num_local_experts", 32}, {"num_experts_per_tok", 4}, {"sliding_window", 128}, {"rope_theta", 150000},
            {"rope_scaling", {{"rope_type", "yarn"}, {"factor", 32.0}, {"beta_fast", 32.0}, {"beta_slow", 1.0},
                              {"truncate", false}, {"original_max_position_embeddings", 4096}}},
            {"swiglu_limit", 7.0}, {"tie_word_embeddings", false}});
  return j;
}

// gpt-oss's layout at the tiny shape's size: the tests' stacked experts (MXFP4 under --quantize).
json tiny_gpt_oss() {
  json j = shape("gpt_oss", 2048, 128, 128, 4, 4, 2, 32, 4096);
  j.update({{"num_local_experts", 8}, {"num_experts_per_tok", 2}, {"sliding_window", 64}, {"swiglu_limit", 7.0},
            {"tie_word_embeddings", false}});
  return j;
}

}  // namespace

std::vector<ModelFamily> gpt_oss() {
  ModelFamily f = base("gpt_oss");
  f.default_eps = 1e-5;
  f.default_head_dim = 64;
  f.attention_bias_default = f.attention_bias_on_o = f.norm_in_fp32 = f.attention_sinks = true;
  f.default_rope_theta = 150000.0;
  f.default_rope_scaling = R"({"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                               "truncate": false, "original_max_position_embeddings": 4096})";
  f.windows = {true, 128, 2, nullptr, 0.0, 0.0};  // even layers slide, odd ones attend in full
  f.quantization = "mxfp4";
  ExpertTraits& e = f.experts;
  e.present = e.dense_sized = e.stacked = e.clamped_swiglu = true;
  e.scores = RouterScores::kSoftmaxOfChosen;
  e.default_experts = 128;
  e.default_per_token = 4;
  e.router = "mlp.router";
  e.gate = e.up = "mlp.experts.gate_up_proj";
  e.down = "mlp.experts.down_proj";
  f.synthetic_shapes = {{"tiny-gpt-oss", tiny_gpt_oss}, {"gpt-oss-20b", gpt_oss_20b}};
  return {f};
}

}  // namespace prefix_scorer::families
