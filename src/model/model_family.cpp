#include "model/model_family.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <utility>

namespace prefix_scorer {
namespace {

ModelFamily family(const char* model_type) {
  ModelFamily f;
  f.model_type = model_type;
  return f;
}

// Gemma's RMSNorm and embedding scale, tanh GELU, heads of 256, tied embeddings, and o's bias from attention_bias.
ModelFamily gemma_family(const char* model_type) {
  ModelFamily f = family(model_type);
  f.default_activation = Activation::kGeluTanh;
  f.default_head_dim = 256;
  f.tied_by_default = f.attention_bias_on_o = f.gemma_norms = true;
  return f;
}

// Gemma 2 and 3: hidden_activation, norms around attention and the MLP, windows on all but every period-th layer.
ModelFamily gemma_windowed_family(const char* model_type, AlternatingWindows windows) {
  ModelFamily f = gemma_family(model_type);
  f.activation_key = "hidden_activation";
  f.sandwich_norms = true;
  f.default_query_pre_attn_scalar = 256;
  f.windows = windows;
  return f;
}

// Qwen's MoE configs and checkpoints (qwen2_moe, qwen3_moe).
ExpertTraits qwen_experts(int64_t default_shared_size) {
  ExpertTraits e;
  e.present = e.sparse_step = true;
  e.default_experts = 60;
  e.default_per_token = 4;
  e.default_size = 1408;
  e.default_shared_size = default_shared_size;
  e.router = "mlp.gate.weight";
  e.gate = "mlp.experts.{}.gate_proj.weight";
  e.up = "mlp.experts.{}.up_proj.weight";
  e.down = "mlp.experts.{}.down_proj.weight";
  return e;
}

ExpertTraits mixtral_experts() {
  ExpertTraits e;
  e.present = e.dense_sized = e.always_normalized = e.routing_fp32 = true;
  e.default_experts = 8;
  e.default_per_token = 2;
  e.router = "block_sparse_moe.gate.weight";
  e.gate = "block_sparse_moe.experts.{}.w1.weight";
  e.up = "block_sparse_moe.experts.{}.w3.weight";
  e.down = "block_sparse_moe.experts.{}.w2.weight";
  return e;
}

ExpertTraits gpt_oss_experts() {
  ExpertTraits e;
  e.present = e.dense_sized = e.gpt_oss = true;
  e.default_experts = 128;
  e.default_per_token = 4;
  e.router = "mlp.router";
  e.gate = e.up = "mlp.experts.gate_up_proj";
  e.down = "mlp.experts.down_proj";
  return e;
}

std::vector<ModelFamily> make_families() {
  ModelFamily llama = family("llama");
  llama.attention_bias_on_o = llama.reads_mlp_bias = true;
  ModelFamily mistral = family("mistral");
  mistral.always_windowed = true;
  ModelFamily ministral3 = mistral;  // Ministral 3: mistral with YaRN and Llama 4's query scale by position
  ministral3.model_type = "ministral3";
  ministral3.llama4_query_scale = true;
  ministral3.default_rope_scaling = R"({"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 16.0,
      "original_max_position_embeddings": 16384, "beta_fast": 32.0, "beta_slow": 1.0, "mscale_all_dim": 1.0,
      "mscale": 1.0, "llama_4_scaling_beta": 0.1})";
  ModelFamily qwen2 = family("qwen2");
  qwen2.qkv_bias = true;
  ModelFamily qwen3 = family("qwen3");
  qwen3.qk_norm = true;
  ModelFamily gemma = gemma_family("gemma");
  gemma.gelu_means_tanh = true;
  ModelFamily gemma2 = gemma_windowed_family("gemma2", {true, 4096, 2, nullptr, 50.0, 30.0});
  ModelFamily gemma3 = gemma_windowed_family("gemma3_text", {true, 4096, 6, "sliding_window_pattern", 0.0, 0.0});
  gemma3.qk_norm = gemma3.local_rope_base = true;
  gemma3.default_rope_theta = 1e6;
  ModelFamily olmo2 = family("olmo2");
  olmo2.attention_bias_on_o = olmo2.qk_norm_full_width = olmo2.output_norms_only = olmo2.norm_in_fp32 = true;
  ModelFamily olmo3 = olmo2;  // olmo2 with every fourth layer full, the others sliding, each kind its own rope
  olmo3.model_type = "olmo3";
  olmo3.windows = {true, 4096, 4, nullptr, 0.0, 0.0};
  olmo3.sliding_rope_unscaled = true;
  ModelFamily smollm3 = family("smollm3");
  smollm3.tied_by_default = smollm3.attention_bias_on_o = smollm3.reads_mlp_bias = smollm3.nope_layers = true;
  smollm3.default_rope_theta = 2e6;
  ModelFamily granite = family("granite");
  granite.attention_bias_on_o = granite.reads_mlp_bias = granite.granite_multipliers = true;
  ModelFamily phi3 = family("phi3");
  phi3.fused_projections = phi3.always_windowed = phi3.phi3_rope_keys = true;
  phi3.fused_qkv = "qkv_proj";
  ModelFamily starcoder2 = family("starcoder2");
  starcoder2.default_activation = Activation::kGeluTanh;
  starcoder2.tied_by_default = starcoder2.always_windowed = starcoder2.layer_norm = true;
  starcoder2.eps_key = "norm_epsilon";
  starcoder2.all_bias_key = "use_bias";
  starcoder2.mlp_up = "c_fc";
  starcoder2.mlp_down = "c_proj";
  ModelFamily phi = family("phi");
  phi.default_activation = Activation::kGeluTanh;
  phi.layer_norm = phi.parallel_block = phi.always_biased = phi.output_layer_bias = true;
  phi.eps_key = "layer_norm_eps";
  phi.mlp_up = "fc1";
  phi.mlp_down = "fc2";
  phi.o_proj = "dense";
  phi.final_norm = "model.final_layernorm";
  ModelFamily gpt_neox = family("gpt_neox");
  gpt_neox.default_activation = Activation::kGelu;
  gpt_neox.layer_norm = gpt_neox.neox_biases = true;
  gpt_neox.eps_key = "layer_norm_eps";
  gpt_neox.mlp_up = "dense_h_to_4h";
  gpt_neox.mlp_down = "dense_4h_to_h";
  gpt_neox.o_proj = "dense";
  gpt_neox.embed = "gpt_neox.embed_in";
  gpt_neox.layers = "gpt_neox.layers";
  gpt_neox.attn = "attention";
  gpt_neox.final_norm = "gpt_neox.final_layer_norm";
  gpt_neox.lm_head = "embed_out";
  gpt_neox.qkv_by_head = "query_key_value";
  gpt_neox.parallel_residual_key = "use_parallel_residual";
  gpt_neox.partial_rotary_key = "rotary_pct";
  gpt_neox.default_partial_rotary = 0.25;
  gpt_neox.theta_key = "rotary_emb_base";
  ModelFamily gpt2 = family("gpt2");
  gpt2.sizes = {"n_embd", "n_inner", "n_layer", "n_head", "n_positions", 4};
  gpt2.activation_key = "activation_function";
  gpt2.default_activation = Activation::kGeluTanh;  // gelu_new
  gpt2.tied_by_default = gpt2.layer_norm = gpt2.always_biased = gpt2.conv1d_weights = true;
  gpt2.eps_key = "layer_norm_epsilon";
  gpt2.embed = "transformer.wte";
  gpt2.position_embed = "transformer.wpe";
  gpt2.layers = "transformer.h";
  gpt2.attn = "attn";
  gpt2.input_norm = "ln_1";
  gpt2.post_norm = "ln_2";
  gpt2.fused_qkv = "c_attn";
  gpt2.o_proj = "c_proj";
  gpt2.mlp_up = "c_fc";
  gpt2.mlp_down = "c_proj";
  gpt2.final_norm = "transformer.ln_f";
  ModelFamily gpt_oss = family("gpt_oss");
  gpt_oss.attention_bias_default = gpt_oss.attention_bias_on_o = gpt_oss.norm_in_fp32 = gpt_oss.attention_sinks = true;
  gpt_oss.default_rope_theta = 150000.0;
  gpt_oss.default_rope_scaling = R"({"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                                     "truncate": false, "original_max_position_embeddings": 4096})";
  gpt_oss.windows = {true, 128, 2, nullptr, 0.0, 0.0};  // even layers slide, odd ones attend in full
  gpt_oss.experts = gpt_oss_experts();
  ModelFamily mixtral = family("mixtral");
  mixtral.always_windowed = true;
  mixtral.experts = mixtral_experts();
  ModelFamily qwen2_moe = family("qwen2_moe");
  qwen2_moe.qkv_bias = true;
  qwen2_moe.experts = qwen_experts(5632);
  ModelFamily qwen3_moe = family("qwen3_moe");
  qwen3_moe.qk_norm = true;
  qwen3_moe.experts = qwen_experts(0);
  return {llama,   mistral, ministral3, qwen2,   qwen3, gemma,   gemma2,    gemma3,
          olmo2,   olmo3,   granite, phi3,  smollm3, starcoder2, phi, gpt_neox, gpt2, gpt_oss, mixtral, qwen2_moe, qwen3_moe};
}

const std::vector<ModelFamily>& families() {
  static const std::vector<ModelFamily> table = make_families();
  return table;
}

}  // namespace

// Multimodal checkpoints: their model_type, and their text model's when text_config omits it.
constexpr std::pair<const char*, const char*> kMultimodal[] = {{"gemma3", "gemma3_text"}, {"mistral3", "mistral"}};

const char* multimodal_text_type(const std::string& model_type) {
  for (const auto& [outer, text] : kMultimodal)
    if (model_type == outer) return text;
  return nullptr;
}

std::vector<std::string> supported_model_types() {
  std::vector<std::string> types;
  for (const ModelFamily& f : families()) types.emplace_back(f.model_type);
  for (const auto& [outer, text] : kMultimodal) types.emplace_back(outer);
  return types;
}

const ModelFamily& model_family(const std::string& model_type) {
  for (const ModelFamily& f : families()) {
    if (model_type == f.model_type) return f;
  }
  throw std::invalid_argument(fmt::format(
      "unsupported model_type '{}' (supported: {}); `--model hf` (transformers) can run it",
      model_type, fmt::join(supported_model_types(), ", ")));
}

}  // namespace prefix_scorer
