#pragma once
// The architecture hyper-parameters of a decoder-only causal LM (the Llama, Qwen and Gemma families), read from a
// Hugging Face config.json as transformers reads it.

#include "model/config/quantization.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prefix_scorer {

// The MLP gate's activation: silu, gelu_pytorch_tanh or gelu (erf), as config.json names them; or xielu, whose
// parameters are learned per layer (apertus).
enum class Activation { kSilu, kGeluTanh, kGelu, kXielu, kRelu2 };  // kRelu2: relu(x)^2 (Nemotron-H's)
// The rope's frequencies: rope_type default, linear, llama3, longrope, yarn or proportional.
enum class RopeType { kDefault, kLinear, kLlama3, kLongRope, kYarn, kProportional };
// A layer's attention: layer_types' full_attention or sliding_attention.
enum class LayerKind { kFullAttention, kSlidingAttention };

// How a router turns its logits into the experts' scores: a softmax over all (in fp32; Mistral 4's in the model
// dtype), a sigmoid of each (in fp32), a softmax over the chosen experts' logits alone (gpt_oss, in the model
// dtype; Granite 4, in fp32), or a sigmoid of the chosen logits alone in the model dtype (Cohere 2 MoE's sigmoid).
enum class RouterScores { kSoftmax, kSigmoid, kSoftmaxOfChosen, kFp32SoftmaxOfChosen, kSoftmaxInDtype, kSigmoidOfChosen };

// How a Mamba2 output y meets its gate z: SiLU(z) times y, then RMS-normed per group and times the weight in y's
// dtype (Granite 4, Nemotron-H); Falcon-H1's norm (weight times in fp32) before or after the gate; the gate alone.
enum class Mamba2Gate { kGateThenNorm, kNormThenGate, kGateThenNormFp32Weight, kGateOnly };

// Each value's name in config.json.
std::string_view to_string(Activation activation);
std::string_view to_string(RopeType type);
std::string_view to_string(LayerKind kind);

struct RopeConfig {
  RopeType type = RopeType::kDefault;
  double theta = 10000.0;
  double factor = 1.0;  // linear, llama3 and longrope
  double low_freq_factor = 1.0;  // llama3
  double high_freq_factor = 4.0;  // llama3
  int64_t original_max_position_embeddings = 8192;  // llama3, longrope and yarn
  // longrope: frequency divisors for a forward of up to original_max_position_embeddings tokens, and beyond.
  std::vector<double> short_factor, long_factor;
  double attention_factor = 1.0;       // longrope and yarn: cos and sin scaled by it
  double beta_fast = 32.0, beta_slow = 1.0;  // yarn: the rotation counts that bound its ramp
  bool truncate = true;                      // yarn: the ramp's bounds rounded outwards to whole dimensions
  // The share of each head that is rotated (phi3): its first dimensions, the rest passed as they are. Proportional
  // rope (Gemma 4) rotates the whole head instead, with this share of its frequencies nonzero.
  double partial_rotary_factor = 1.0;
  // Llama 4's attention temperature (ministral3): queries, once rotated, times
  // 1 + beta ln(1 + floor(position / original_max_position_embeddings)); 0: none.
  double llama4_scaling_beta = 0;
  // Any type but default: latent attention's scores times (0.1 mscale_all_dim ln(factor) + 1)^2 (DeepSeek's), as
  // transformers' yarn_apply_mscale; 0: unchanged.
  double mscale_all_dim = 0;

  // The rotated width of a head: int(head_dim * partial_rotary_factor), as transformers rounds it (proportional:
  // the whole head).
  int64_t rotary_dim(int64_t head_dim) const {
    if (type == RopeType::kProportional) return head_dim;
    return static_cast<int64_t>(static_cast<double>(head_dim) * partial_rotary_factor);
  }
};

struct ModelConfig {
  std::string model_type;  // one of supported_model_types()
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;  // under latent attention, the rotated part of a key (qk_rope_head_dim)
  int64_t max_position_embeddings = 2048;
  int64_t sliding_window = 0;  // 0: attention over the whole sequence
  std::vector<LayerKind> layer_kinds;  // which layers use sliding_window; empty: all (gemma2 and gemma3 alternate)
  double rms_norm_eps = 1e-6;
  bool tie_word_embeddings = false;
  bool qkv_bias = false;     // bias on q, k and v projections (qwen2, or llama attention_bias)
  bool o_bias = false;       // bias on the output projection (llama and gemma attention_bias)
  bool mlp_bias = false;     // bias on gate, up and down projections (llama mlp_bias)
  bool qk_norm = false;      // RMSNorm over each head of q and k (qwen3, gemma3) ...
  bool qk_norm_full_width = false;  // ... or over the whole q and k projections (olmo2)
  bool qk_norm_after_rope = false;  // per-head q/k norms after the rotation (hunyuan_v1_dense), not before
  bool qk_norm_weight_per_head = false;  // per-head q/k norms with a weight for each head (cohere)
  bool qk_unit_norm = false;  // q and k RMS-normed per head without a weight once rotated, where a layer rotates (Llama 4)
  // Temperature tuning where a layer does not rotate (Llama 4's attn_scale, floor_scale): queries, in fp32, times
  // 1 + query_temperature ln(1 + floor((position + 1) / query_temperature_floor)); 0: none.
  double query_temperature = 0;
  int64_t query_temperature_floor = 1;
  // The rope rotates interleaved pairs (0, 1), (2, 3), ... of each head (ernie4_5): q and k rows are reordered at
  // load into the halves the rope here rotates, which leaves every q . k as it is.
  bool interleaved_rope = false;
  bool fused_projections = false;   // q, k, v in one qkv_proj and gate, up in one gate_up_proj (phi3)
  Activation activation = Activation::kSilu;  // of the MLP's gate
  bool norm_plus_one = false;       // RMSNorm scales by (1 + w), in fp32 (gemma)
  bool scale_embeddings = false;    // embeddings times sqrt(hidden_size) in the model dtype (gemma)
  bool sandwich_norms = false;      // norms after attention and before and after the MLP (gemma2, gemma3)
  bool output_norms_only = false;   // norms after attention and after the MLP, none before (olmo2)
  bool norm_in_fp32 = false;        // RMSNorm multiplies by w before casting back to the model dtype (olmo2)
  bool layer_norm = false;          // LayerNorm with a bias instead of RMSNorm, rms_norm_eps its epsilon (starcoder2)
  bool norm_bias = true;            // ... or without (cohere)
  bool gated_mlp = true;            // the MLP is down(act(gate) * up); else down(act(up)) (starcoder2, phi)
  bool parallel_block = false;      // attention and MLP both on one norm's output, added together (phi)
  bool lm_head_bias = false;        // the output layer has a bias (phi)
  double query_pre_attn_scalar = 0;  // attention scores scale by its -1/2 power; 0: by head_dim's (gemma2, gemma3)
  double attn_softcap = 0;           // attention scores become cap * tanh(score / cap); 0: none (gemma2)
  double final_softcap = 0;          // the same for the logits (gemma2)
  double attention_multiplier = 0;   // attention scores' scale itself; 0: none (granite; 1 for gpt2 unscaled)
  bool scale_by_inverse_layer = false;  // scores also divided by the layer's index + 1 (gpt2's option)
  bool learned_positions = false;    // position embeddings added to the token embeddings; no rope (gpt2)
  double embedding_multiplier = 1;   // granite's multipliers: of the embeddings,
  double residual_multiplier = 1;    // of each block's output before it joins the residual,
  double logits_scaling = 1;         // and the divisor of the logits
  // Mixture of experts: an MoE layer's MLP is `num_experts` experts of `moe_intermediate_size`, each token through
  // the `experts_per_token` its router ranks highest.
  int64_t num_experts = 0;
  int64_t experts_per_token = 0;
  std::vector<int64_t> layer_experts_per_token;  // by layer (hunyuan_v1_moe's moe_topk list); empty: the same in all
  int64_t moe_intermediate_size = 0;
  RouterScores router_scores = RouterScores::kSoftmax;
  bool router_fp32 = false;           // the router's weight kept in fp32 and its logits computed in fp32
  bool expert_correction_bias = false;  // a learned bias added to the scores to choose experts, never to weigh them
  // Top-k limited to groups (DeepSeek's n_group, topk_group): the experts split into expert_groups groups, each
  // ranked by the sum of its two best scores, and only the best expert_groups_chosen groups' experts chosen.
  int64_t expert_groups = 1, expert_groups_chosen = 1;
  bool norm_topk_prob = false;        // the chosen experts' weights renormalized to sum to 1 ...
  double routing_norm_epsilon = 0;    // ... their sum plus this (DeepSeek's 1e-20) ...
  double routing_norm_floor = 0;      // ... and at least this (ERNIE's moe_norm_min)
  double routed_scaling_factor = 1;   // the chosen weights times this ...
  bool scaled_after_sum = false;      // ... or the experts' summed output
  double router_logit_softcap = 0;    // the router's logits soft-capped (0: not)
  bool routing_weights_fp32 = false;  // they stay float32 through the experts' sum (mixtral)
  bool router_weight_on_input = false;  // each chosen expert reads the input times its weight (Llama 4)
  // A shared expert of this width beside the routed ones (0: none), behind a sigmoid gate (qwen2_moe) or not, its
  // output added to theirs or averaged with it.
  int64_t shared_expert_intermediate_size = 0;
  bool shared_expert_gated = false;
  bool shared_expert_averaged = false;
  std::vector<bool> moe_layers;       // which layers are MoE (empty: all, when num_experts > 0)
  // gpt_oss: biases on the router and every expert, and experts down((clamp(up, ±limit) + 1) * g * sigmoid(alpha *
  // g)) with g = min(gate, limit).
  bool expert_biases = false;
  double swiglu_alpha = 0, swiglu_limit = 0;  // limit 0: experts gate by the config's activation
  bool clamped_swiglu_mlps = false;  // the dense MLPs and shared experts gate by the clamped SwiGLU too (MiniMax M3)
  // Gemma 4's MoE (enable_moe_block): every layer's experts beside its dense MLP (not instead of it), routed from
  // the residual RMS-normed without weight, times a learned scale and hidden^-1/2; each chosen weight times its
  // expert's learned scale.
  bool experts_beside_mlp = false;
  // Nemotron-H's MoE: experts (and the shared expert) without a gate, down(act(up)); they read and write
  // moe_latent_size values, projected from the layer's input and back (0: the hidden size itself).
  bool ungated_experts = false;
  int64_t moe_latent_size = 0;
  // How the checkpoint stores its projections (quantization_config; method kNone: as plain tensors). Every form is
  // dequantized at load.
  WeightQuantization quantization;
  bool attention_sinks = false;  // a learned logit per head joins each softmax; no value takes its weight (gpt_oss)
  RopeConfig rope;                          // of every layer, or of the full-attention layers ...
  std::optional<RopeConfig> sliding_rope;   // ... when the sliding layers have their own (gemma3, olmo3)
  std::vector<bool> rope_layers;            // which layers rotate q and k; empty: all (smollm3's no-rope layers)
  // The last this many layers compute no keys and values: each attends to those of the last earlier layer of its
  // kind (full or sliding), as Gemma 3n's and Gemma 4's num_kv_shared_layers; 0: none.
  int64_t kv_shared_layers = 0;
  // Heads of their own size (Gemma 4's full-attention layers: global_head_dim, num_global_key_value_heads, or
  // per_layer_config): by layer, 0 where the layer takes head_dim or num_key_value_heads; empty: none differ.
  std::vector<int64_t> layer_head_dims, layer_kv_heads, layer_heads;
  int64_t value_head_dim = 0;       // each value head's width, zero-padded to head_dim at load; 0: head_dim
  double value_multiplier = 1;      // the values times this (a float)
  bool sinks_on_sliding_only = false;
  // Gemma 4: full-attention layers' values are their keys' projection (attention_k_eq_v), values are normed by a
  // weightless RMSNorm, each layer's output is multiplied by its learned scalar, and the KV-shared layers' MLPs are
  // twice as wide (use_double_wide_mlp).
  bool keys_as_values = false;
  bool value_norm = false;
  bool layer_scalars = false;
  bool double_wide_shared_mlp = false;
  // Per-layer embeddings (Gemma 4's hidden_size_per_layer_input; 0: none): each layer adds a gated projection of
  // its own slice of a per-token input, made from a second embedding table and a projection of the embeddings.
  int64_t per_layer_input_size = 0;
  int64_t per_layer_vocab = 0;  // the per-layer table's rows (vocab_size_per_layer_input)
  int64_t output_vocab_size = 0;  // a pruned output layer's rows (the ids below it); 0: vocab_size
  // Gated DeltaNet layers in place of attention (Qwen 3.5's linear_attention layers): by layer, empty where none.
  // Their sizes: q/k heads and value heads, each head's width, the causal convolution's taps.
  std::vector<bool> linear_attention_layers;
  int64_t linear_key_heads = 0, linear_value_heads = 0, linear_key_head_dim = 0, linear_value_head_dim = 0;
  int64_t linear_conv_taps = 0;
  bool attention_output_gate = false;  // attention's output times sigmoid of a second half of q's projection
  bool attention_gate_softplus = false;  // the head or output gate through softplus, not sigmoid
  bool attention_head_gate = false;    // each head's output times sigmoid of a projection of the input (LFM3)
  double linear_beta_scale = 1;        // beta = sigmoid(b) times this (OLMo hybrid's negative eigenvalues: 2)
  double linear_norm_eps = 0;          // the gated output norm's epsilon; 0: rms_norm_eps
  double linear_gate_lower_bound = 0;  // Ling 3's safe gate's bound (kda_lower_bound under kda_safe_gate); 0: none
  bool recurrent_layers_pre_norm = false;  // Gated DeltaNet layers normed before their blocks, whatever the others
  // Short-convolution layers in place of attention (LFM2's conv layers): by layer, empty where none; the
  // convolution's taps (conv_L_cache) and whether the projections and the convolution have biases (conv_bias).
  std::vector<bool> short_conv_layers;
  int64_t short_conv_taps = 0;
  bool short_conv_bias = false;
  // Mamba2 layers in place of attention (Granite 4's mamba layers): by layer, empty where none. Their heads, each
  // head's width, the groups of heads that share B and C, the state's size per head and group, the convolution's
  // taps, the prefill scan's chunk, biases on the convolution and on in_proj and out_proj, and the clamp of dt in a
  // prefill (time_step_limit; an upper bound of 0: none).
  std::vector<bool> mamba_layers;
  int64_t mamba_heads = 0, mamba_head_dim = 0, mamba_groups = 0, mamba_state_size = 0, mamba_taps = 0;
  int64_t mamba_chunk = 0;
  bool mamba_conv_bias = false, mamba_proj_bias = false;
  double mamba_dt_min = 0, mamba_dt_max = 0;
  Mamba2Gate mamba_gate = Mamba2Gate::kGateThenNorm;
  bool mamba_out_bias = false;  // on out_proj (Falcon-H1's projectors_bias; else mamba_proj_bias's)
  // Falcon-H1: attention and a Mamba2 mixer side by side in every layer, and its muP multipliers: of the Mamba2
  // input, of its z, x, B, C and dt projections, of its output; of attention's input, keys and output; of the MLP's
  // gate and output; of the logits.
  bool mamba_beside_attention = false;
  double ssm_in_multiplier = 1, ssm_out_multiplier = 1;
  std::array<double, 5> ssm_multipliers{1, 1, 1, 1, 1};
  double attention_in_multiplier = 1, attention_out_multiplier = 1, key_multiplier = 1;
  std::array<double, 2> mlp_multipliers{1, 1};
  double lm_head_multiplier = 1;
  // Layers of one block each (Nemotron-H): every layer its mixer alone (attention or Mamba2, on its one norm), but
  // those that are an MLP alone (by layer; empty: none).
  bool mixer_only_layers = false;
  std::vector<bool> mlp_only_layers;
  // Multi-head latent attention in every layer (DeepSeek V3 and its kin; 0: none): a token's keys and values come
  // from a latent of kv_lora_rank values (normed) and one rotated key of head_dim (qk_rope_head_dim) values shared
  // by the heads, expanded per head by kv_b_proj to keys of qk_nope_head_dim (beside the rotated part) and values
  // of v_head_dim. The query through a pair of rank q_lora_rank (0: q_proj directly).
  int64_t kv_lora_rank = 0, q_lora_rank = 0, qk_nope_head_dim = 0, v_head_dim = 0;
  bool latent_attention() const { return kv_lora_rank > 0; }
  // Sparse attention through an indexer (DeepSeek V3.2's index_topk; 0: none): each query attends to the index_topk
  // keys its indexer ranks highest, which is dense attention while a query sees at most that many keys. The
  // indexer is not built: longer inputs are refused. Attention within chunks (Llama 4's attention_chunk_size) is
  // likewise dense attention while a query sees at most a chunk. The config key that sets it, named by the refusal.
  int64_t dense_attention_limit = 0;
  const char* dense_attention_limit_key = "index_topk";

  bool layer_uses_rope(int64_t layer) const { return rope_layers.empty() || rope_layers.at(layer); }
  int64_t layer_head_dim(int64_t layer) const {
    return layer_head_dims.empty() || layer_head_dims.at(layer) == 0 ? head_dim : layer_head_dims.at(layer);
  }
  int64_t layer_head_count(int64_t layer) const {
    return layer_heads.empty() || layer_heads.at(layer) == 0 ? num_heads : layer_heads.at(layer);
  }
  int64_t layer_kv_head_count(int64_t layer) const {
    return layer_kv_heads.empty() || layer_kv_heads.at(layer) == 0 ? num_kv_heads : layer_kv_heads.at(layer);
  }
  // Whether layer `layer` reads another layer's keys and values (the last kv_shared_layers).
  bool kv_shared(int64_t layer) const { return layer >= num_layers - kv_shared_layers; }

  // The rows of the output layer: vocab_size, or fewer where the head is pruned (Apertus 1.5's output_vocab_size:
  // the ids below it).
  int64_t output_vocab() const { return output_vocab_size > 0 ? output_vocab_size : vocab_size; }
  bool is_short_conv(int64_t layer) const { return !short_conv_layers.empty() && short_conv_layers.at(layer); }
  bool is_mamba(int64_t layer) const { return !mamba_layers.empty() && mamba_layers.at(layer); }
  bool is_mlp_only(int64_t layer) const { return !mlp_only_layers.empty() && mlp_only_layers.at(layer); }
  bool is_linear_attention(int64_t layer) const {
    return !linear_attention_layers.empty() && linear_attention_layers.at(layer);
  }
  bool is_moe_layer(int64_t layer) const { return num_experts > 0 && (moe_layers.empty() || moe_layers.at(layer)); }
  int64_t layer_top_k(int64_t layer) const {
    return layer_experts_per_token.empty() ? experts_per_token : layer_experts_per_token.at(layer);
  }
  // The window of one layer (0: none).
  int64_t layer_window(int64_t layer) const;
  // Whether any layer attends through a sliding window; whether any attends without one.
  bool has_window() const;
  bool has_full_attention() const;
  // The attention scores' scale; 0 for the default 1 / sqrt(head_dim).
  double attention_scale() const;
  // The scale of one layer's scores (attention_scale's rule; never 0 when it depends on the layer).
  double layer_attention_scale(int64_t layer) const;
  // Whether a forward of `fed_length` tokens takes the longrope long factors, as transformers picks them for a
  // sequence scored alone (longer than original_max_position_embeddings).
  bool long_rope(int64_t fed_length) const {
    return rope.type == RopeType::kLongRope && fed_length > rope.original_max_position_embeddings;
  }
  // The rope variant (ForwardBatch::rope_variant) a sequence of `fed_length` tokens takes: 1 for the long factors.
  int64_t rope_variant(int64_t fed_length) const { return long_rope(fed_length) ? 1 : 0; }

  // Parses config.json text; throws std::invalid_argument naming an unsupported model_type, rope type,
  // activation, or a missing or inconsistent field.
  static ModelConfig from_json(const std::string& text);
  // Reads DIR/config.json (or the file itself); throws std::runtime_error when it cannot be read.
  static ModelConfig from_file(const std::string& path);
  // A built-in shape (synthetic_shape_names(): each family lists its own, of released sizes or tiny with its traits);
  // throws std::invalid_argument naming the known ones.
  static ModelConfig synthetic(const std::string& name);
  // config.json text that from_json reads back to this config (and Hugging Face transformers understands).
  std::string to_json() const;

  // The lm-evaluation-harness window for a max_length option: the option, or max_position_embeddings for 0.
  int64_t window(int64_t max_length) const { return max_length > 0 ? max_length : max_position_embeddings; }

  // Throws std::invalid_argument when the sizes do not make a valid model.
  void validate() const;
};

}  // namespace prefix_scorer
