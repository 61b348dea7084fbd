// Falcon-H1 (TII): attention (its keys times key_multiplier before the rope) and a Mamba2 mixer side by side on each
// layer's input_layernorm, their outputs added, then the MLP (feed_forward) on pre_ff_layernorm; muP multipliers
// throughout; the final norm named final_layernorm.

#include "model/config/config_json.h"
#include "model/families/families.h"
#include "model/families/mamba2_keys.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <vector>

namespace prefix_scorer::families {
namespace {

using config_json::get_or;
using config_json::has_field;
using config_json::json;

// A list of `n` numbers under `key`, or `fallback` when absent.
template <size_t n>
std::array<double, n> numbers_or(const json& j, const char* key, std::array<double, n> fallback) {
  if (!has_field(j, key)) return fallback;
  const auto values = get_or<std::vector<double>>(j, key, {});
  if (values.size() != n)
    throw std::invalid_argument(fmt::format("config.json: {} must hold {} numbers, got {}", key, n, values.size()));
  std::copy(values.begin(), values.end(), fallback.begin());
  return fallback;
}

// Falcon-H1's keys as FalconH1Config reads them: the mamba_ keys (the inner width mamba_d_ssm, 1024 when absent;
// null: mamba_expand times hidden_size), projectors_bias (out_proj's), mamba_rms_norm and mamba_norm_before_gate (the
// gate and its norm), and the muP multipliers.
void read_falcon_keys(const json& j, ModelConfig& c) {
  c.mamba_beside_attention = true;
  const int64_t inner = !j.contains("mamba_d_ssm") ? 1024
                        : j["mamba_d_ssm"].is_null() ? get_or<int64_t>(j, "mamba_expand", 2) * c.hidden_size
                                                     : get_or<int64_t>(j, "mamba_d_ssm", 1024);
  read_mamba_keys(j, c, inner, "the inner width mamba_d_ssm");
  c.mamba_out_bias = get_or<bool>(j, "projectors_bias", false);
  c.mamba_gate = !get_or<bool>(j, "mamba_rms_norm", false)           ? Mamba2Gate::kGateOnly
                 : get_or<bool>(j, "mamba_norm_before_gate", true) ? Mamba2Gate::kNormThenGate
                                                                     : Mamba2Gate::kGateThenNormFp32Weight;
  c.embedding_multiplier = get_or<double>(j, "embedding_multiplier", 1.0);
  c.lm_head_multiplier = get_or<double>(j, "lm_head_multiplier", 1.0);
  c.attention_in_multiplier = get_or<double>(j, "attention_in_multiplier", 1.0);
  c.attention_out_multiplier = get_or<double>(j, "attention_out_multiplier", 1.0);
  c.key_multiplier = get_or<double>(j, "key_multiplier", 1.0);
  c.ssm_in_multiplier = get_or<double>(j, "ssm_in_multiplier", 1.0);
  c.ssm_out_multiplier = get_or<double>(j, "ssm_out_multiplier", 1.0);
  c.ssm_multipliers = numbers_or<5>(j, "ssm_multipliers", {1, 1, 1, 1, 1});
  c.mlp_multipliers = numbers_or<2>(j, "mlp_multipliers", {1, 1});
}

void write_falcon_keys(const ModelConfig& c, json& j) {
  write_mamba_keys(c, j);
  j.update({{"mamba_d_ssm", c.mamba_heads * c.mamba_head_dim}, {"projectors_bias", c.mamba_out_bias},
            {"mamba_rms_norm", c.mamba_gate != Mamba2Gate::kGateOnly},
            {"mamba_norm_before_gate", c.mamba_gate == Mamba2Gate::kNormThenGate},
            {"embedding_multiplier", c.embedding_multiplier}, {"lm_head_multiplier", c.lm_head_multiplier},
            {"attention_in_multiplier", c.attention_in_multiplier},
            {"attention_out_multiplier", c.attention_out_multiplier}, {"key_multiplier", c.key_multiplier},
            {"ssm_in_multiplier", c.ssm_in_multiplier}, {"ssm_out_multiplier", c.ssm_out_multiplier},
            {"ssm_multipliers", c.ssm_multipliers}, {"mlp_multipliers", c.mlp_multipliers}});
}

}  // namespace

namespace {

// tiiuae/Falcon-H1-1.5B-Base's sizes (its muP multipliers left at 1)
json falcon_h1_1_5b() {
  json j = shape("falcon_h1", 65537, 2048, 4608, 24, 8, 2, 128, 131072);
  j.update({{"mamba_d_ssm", 3072}, {"mamba_n_heads", 48}, {"mamba_d_head", 64}, {"mamba_d_state", 256},
            {"mamba_n_groups", 1}, {"mamba_d_conv", 4}, {"mamba_chunk_size", 128}, {"tie_word_embeddings", false}});
  return j;
}

}  // namespace

std::vector<ModelFamily> falcon_h1() {
  ModelFamily f = base("falcon_h1");
  f.read_keys = read_falcon_keys;
  f.write_keys = write_falcon_keys;
  f.attention_bias_on_o = f.reads_mlp_bias = true;
  f.default_eps = 1e-5;
  f.post_norm = "pre_ff_layernorm";
  f.final_norm = "model.final_layernorm";
  f.mlp_module = "feed_forward";
  f.synthetic_shapes = {{"falcon-h1-1.5b", falcon_h1_1_5b}};
  return {f};
}

}  // namespace prefix_scorer::families
