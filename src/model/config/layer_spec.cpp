#include "model/config/layer_spec.h"

#include "model/config/model_family.h"

#include <algorithm>
#include <cmath>

namespace prefix_scorer {
namespace {

// Latent attention's scores scale as the expanded keys' width, qk_nope_head_dim + qk_rope_head_dim, gives; a yarn
// rope with mscale_all_dim multiplies that by mscale(factor, mscale_all_dim)^2, as transformers' yarn_apply_mscale
// (on rotated layers: Kimi Linear's unrotated ones scale by the width alone).
double latent_attention_scale(const ModelConfig& c, bool rotated) {
  double scale = 1.0 / std::sqrt(static_cast<double>(c.qk_nope_head_dim + c.head_dim));
  const RopeConfig& r = c.rope;
  if (rotated && r.type != RopeType::kDefault && r.mscale_all_dim != 0 && r.factor > 1) {
    const double mscale = 0.1 * r.mscale_all_dim * std::log(r.factor) + 1.0;
    scale *= mscale * mscale;
  }
  return scale;
}

AttentionSpec attention_spec(const ModelConfig& c, int64_t layer) {
  AttentionSpec a;
  a.heads = c.layer_head_count(layer);
  a.kv_heads = c.layer_kv_head_count(layer);
  a.head_dim = c.layer_head_dim(layer);
  a.window = c.layer_window(layer);
  a.keys_as_values = c.keys_as_values && a.window == 0;
  a.value_norm = c.value_norm;
  a.output_gate = c.attention_output_gate;
  a.head_gate = c.attention_head_gate;
  a.gate_softplus = c.attention_gate_softplus;
  a.key_multiplier = c.key_multiplier;
  a.qk_norm_after_rope = c.qk_norm_after_rope;
  a.qk_norm_weight_per_head = c.qk_norm_weight_per_head;
  if (c.layer_uses_rope(layer)) a.rope = a.window > 0 && c.sliding_rope ? 1 : 0;
  a.scale = c.layer_attention_scale(layer);
  a.softcap = c.attn_softcap;
  a.sinks = c.attention_sinks && (!c.sinks_on_sliding_only || a.window > 0);
  a.value_head_dim = c.value_head_dim > 0 ? c.value_head_dim : a.head_dim;
  a.value_multiplier = c.value_multiplier;
  a.qk_norm = c.qk_norm ? QkNorm::kPerHead : c.qk_norm_full_width ? QkNorm::kFullWidth : QkNorm::kNone;
  if (c.qk_unit_norm && a.rope >= 0) a.qk_norm = QkNorm::kUnitPerHead;
  a.qk_norm_after_rope = a.qk_norm_after_rope || c.qk_unit_norm;
  a.query_scaled_by_position = c.rope.llama4_scaling_beta != 0 || (c.query_temperature != 0 && a.rope < 0);
  a.qkv_bias = c.qkv_bias;
  a.o_bias = c.o_bias;
  if (c.latent_attention()) {  // one kv head of the latent and the rotated key; scores scaled as the expanded form's
    a.kv_heads = 1;
    a.head_dim = c.kv_lora_rank + c.head_dim;
    a.scale = latent_attention_scale(c, a.rope >= 0);
  }
  // A KV-shared layer reads the last layer before the shared ones that is of its kind (windowed or not).
  a.kv_layer = layer;
  const int64_t first_shared = c.num_layers - c.kv_shared_layers;
  for (int64_t j = first_shared - 1; layer >= first_shared && j >= 0; --j) {
    if ((c.layer_window(j) > 0) == (a.window > 0)) {
      a.kv_layer = j;
      break;
    }
  }
  return a;
}

MlpSpec experts_spec(const ModelConfig& c, int64_t layer) {
  MlpSpec m;
  m.activation = c.activation;
  m.kind = MlpKind::kExperts;
  m.size = c.moe_intermediate_size;
  m.swiglu_alpha = c.swiglu_alpha;
  m.swiglu_limit = c.swiglu_limit;
  m.ungated_experts = c.ungated_experts;
  m.latent_size = c.moe_latent_size;
  RouterSpec& r = m.router;
  r.experts = c.num_experts;
  r.per_token = c.layer_top_k(layer);
  r.scores = c.router_scores;
  r.fp32_logits = c.router_fp32;
  r.correction_bias = c.expert_correction_bias;
  r.groups = c.expert_groups;
  r.groups_chosen = c.expert_groups_chosen;
  r.normalize = c.norm_topk_prob;
  r.norm_epsilon = c.routing_norm_epsilon;
  r.norm_floor = c.routing_norm_floor;
  r.scaling = c.routed_scaling_factor;
  r.scaled_after_sum = c.scaled_after_sum;
  r.logit_softcap = c.router_logit_softcap;
  r.weights_fp32 = c.routing_weights_fp32;
  r.biases = c.expert_biases;
  r.weight_on_input = c.router_weight_on_input;
  r.shared_expert_size = c.shared_expert_intermediate_size;
  r.shared_expert_gated = c.shared_expert_gated;
  r.shared_expert_averaged = c.shared_expert_averaged;
  r.scaled_input = r.expert_scales = c.experts_beside_mlp;
  return m;
}

MlpSpec mlp_spec(const ModelConfig& c, int64_t layer) {
  if (c.is_moe_layer(layer) && !c.experts_beside_mlp) return experts_spec(c, layer);
  MlpSpec m;
  m.activation = c.activation;
  m.kind = c.gated_mlp ? MlpKind::kGated : MlpKind::kUngated;
  m.size = c.intermediate_size * (c.double_wide_shared_mlp && c.kv_shared(layer) ? 2 : 1);
  m.bias = c.mlp_bias;
  m.gate_multiplier = c.mlp_multipliers[0];
  m.down_multiplier = c.mlp_multipliers[1];
  if (c.clamped_swiglu_mlps) {
    m.swiglu_alpha = c.swiglu_alpha;
    m.swiglu_limit = c.swiglu_limit;
  }
  return m;
}

}  // namespace

ModelSpec model_spec(const ModelConfig& c) {
  ModelSpec spec;
  spec.norm = {c.layer_norm, c.norm_bias, c.rms_norm_eps, c.norm_plus_one, c.norm_in_fp32};
  spec.hidden_size = c.hidden_size;
  // Each rope rotates the heads of the layers that take it (full-attention layers' may be wider).
  auto head_dim_of = [&](bool sliding) {
    for (int64_t i = 0; i < c.num_layers; ++i)
      if ((c.layer_window(i) > 0) == sliding) return c.layer_head_dim(i);
    return c.head_dim;
  };
  spec.ropes.push_back({c.rope, head_dim_of(!c.has_full_attention())});
  if (c.sliding_rope) spec.ropes.push_back({*c.sliding_rope, head_dim_of(true)});
  spec.per_layer_input_size = c.per_layer_input_size;
  if (c.rope.llama4_scaling_beta != 0)
    spec.query_scale = {c.rope.llama4_scaling_beta, c.rope.original_max_position_embeddings, 0, false};
  else if (c.query_temperature != 0)
    spec.query_scale = {c.query_temperature, c.query_temperature_floor, 1, true};
  // One norm feeds both blocks of a parallel layer unless the family names a second (gpt_neox's own MLP norm).
  const bool one_norm_for_both = model_family(c.model_type).parallel_block;
  const DeltaNetLayout layout = model_family(c.model_type).deltanet;
  const bool kda = layout == DeltaNetLayout::kKimi || layout == DeltaNetLayout::kLing;
  for (int64_t i = 0; i < c.num_layers; ++i) {
    LayerSpec l;
    l.attention = attention_spec(c, i);
    if (c.is_linear_attention(i)) {
      l.mixer = MixerKind::kGatedDeltaNet;
      l.delta = {c.linear_key_heads, c.linear_value_heads, c.linear_key_head_dim, c.linear_value_head_dim,
                 c.linear_conv_taps, c.linear_beta_scale, c.linear_norm_eps > 0 ? c.linear_norm_eps : c.rms_norm_eps,
                 kda, c.linear_gate_lower_bound, layout == DeltaNetLayout::kLing};
    }
    if (c.is_short_conv(i)) {
      l.mixer = MixerKind::kShortConv;
      l.short_conv = {c.short_conv_taps, c.short_conv_bias};
    }
    if (c.is_mamba(i) || c.mamba_beside_attention) {
      if (c.is_mamba(i)) l.mixer = MixerKind::kMamba2;
      l.mamba_beside = c.mamba_beside_attention;
      l.mamba = {c.mamba_heads, c.mamba_head_dim, c.mamba_groups, c.mamba_state_size, c.mamba_taps, c.mamba_chunk,
                 c.mamba_conv_bias, c.mamba_proj_bias, c.mamba_dt_min, c.mamba_dt_max, c.rms_norm_eps,
                 c.mamba_gate, c.mamba_out_bias, c.ssm_in_multiplier, c.ssm_multipliers};
      l.attention_in_multiplier = c.attention_in_multiplier;
      l.attention_out_multiplier = c.attention_out_multiplier;
      l.mamba_out_multiplier = c.ssm_out_multiplier;
    }
    l.mlp = mlp_spec(c, i);
    if (c.latent_attention() && !c.is_linear_attention(i)) {
      l.mixer = MixerKind::kLatentAttention;
      l.latent = {c.q_lora_rank, c.kv_lora_rank, c.qk_nope_head_dim, c.head_dim, c.v_head_dim};
    }
    if (c.is_mlp_only(i)) l.mixer = MixerKind::kNone;
    if (c.mixer_only_layers && !c.is_mlp_only(i)) l.mlp = {MlpKind::kNone, 0};
    const bool output_norms_only = c.output_norms_only && !(c.is_linear_attention(i) && c.recurrent_layers_pre_norm);
    l.input_norm = !output_norms_only;
    l.attn_out_norm = l.mlp_out_norm = c.sandwich_norms || output_norms_only;
    l.pre_mlp_norm = c.sandwich_norms || (!output_norms_only && !one_norm_for_both && !c.mixer_only_layers);
    l.parallel = c.parallel_block;
    l.residual_multiplier = c.residual_multiplier;
    l.per_layer_input = c.per_layer_input_size > 0;
    l.scalar = c.layer_scalars;
    l.experts_beside = c.experts_beside_mlp;
    if (l.experts_beside) l.experts = experts_spec(c, i);
    spec.layers.push_back(l);
  }
  return spec;
}

bool ModelSpec::has_recurrent_layers() const {
  return std::any_of(layers.begin(), layers.end(), [](const LayerSpec& l) {
    return (l.mixer != MixerKind::kAttention && l.mixer != MixerKind::kNone && l.mixer != MixerKind::kLatentAttention) ||
           l.mamba_beside;
  });
}

bool ModelSpec::token_wise() const {
  return per_layer_input_size == 0 && std::all_of(layers.begin(), layers.end(), [](const LayerSpec& l) {
    return (l.mixer == MixerKind::kAttention || l.mixer == MixerKind::kNone) && !l.mamba_beside &&
           !l.per_layer_input && !l.attention.head_gate;
  });
}

}  // namespace prefix_scorer
