#pragma once
// The model as the forward walks it: a list of layer specs, each a mixer (attention today) and an MLP (dense or
// experts behind a router) with their norms. Sizes, windows, ropes and scales are data of each layer, so that
// layers may differ in any of them; the forward and the weight layout read the config through this alone.

#include "model/config/model_config.h"

#include <array>
#include <cstdint>
#include <vector>

namespace prefix_scorer {

// Where q and k are normalized: over each head, over the whole projection (olmo2), or over each head without a
// weight (Llama 4's L2 norm).
enum class QkNorm { kNone, kPerHead, kFullWidth, kUnitPerHead };

struct AttentionSpec {
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  int64_t window = 0;      // a query sees keys within this many positions of its own; 0: every key before it
  int64_t rope = -1;       // index into ModelSpec::ropes; -1: no rotation
  double scale = 0;        // of q . k; 0: 1 / sqrt(head_dim)
  double softcap = 0;      // scores become softcap * tanh(score / softcap); 0: none
  bool sinks = false;      // a learned logit per head joins each softmax, whose weight no value takes
  QkNorm qk_norm = QkNorm::kNone;
  bool qkv_bias = false, o_bias = false;
  int64_t kv_layer = 0;    // the layer whose keys and values it attends to (its own index)
  bool qk_norm_after_rope = false;  // per-head q/k norms on the rotated heads (hunyuan), not before rotation
  bool qk_norm_weight_per_head = false;  // the per-head norms' weights [heads, head_dim], not one [head_dim]
  bool keys_as_values = false;  // values are the keys' projection, taken before the keys' norm and rotation
  bool value_norm = false;      // values normed by an RMSNorm without weight
  bool output_gate = false;     // the output times sigmoid of a gate projection of the input (Qwen 3.5)
  bool head_gate = false;       // each head's output times sigmoid of its projection of the input (LFM3)
  bool gate_softplus = false;   // either gate through softplus (in fp32, rounded back), not sigmoid
  double key_multiplier = 1;    // the keys' projection times this before their rotation (Falcon-H1)
  double value_multiplier = 1;  // the values' projection times this
  int64_t value_head_dim = 0;   // the checkpoint's value heads' width (<= head_dim; zero-padded to it at load)
  bool query_scaled_by_position = false;  // q times ModelSpec::query_scale's factor at its position (after rope)

  int64_t q_width() const { return heads * head_dim; }
  int64_t kv_width() const { return kv_heads * head_dim; }
  bool has_qk_norm_weights() const { return qk_norm != QkNorm::kNone && qk_norm != QkNorm::kUnitPerHead; }
};

// What mixes tokens in a layer: attention, a Gated DeltaNet (a recurrent state per value head, see
// gated_delta_rule.h) of these sizes, a short convolution (LFM2: out(C * conv(B * x)), B, C and x projected from
// the input; its state the convolution's last inputs), or Mamba2 (a state per head, see mamba2_scan.h).
// kNone: the layer is its MLP alone (Nemotron-H's MLP layers). kLatentAttention: multi-head latent attention (see
// LatentSpec).
enum class MixerKind { kAttention, kGatedDeltaNet, kShortConv, kMamba2, kNone, kLatentAttention };

// Multi-head latent attention (DeepSeek V3), computed with kv_b_proj absorbed: a token caches only its latent, the
// kv_rank normed values and the rope_dim values of its rotated key, as one key of one head that is its value too.
// Each query head's unrotated part (nope_dim) times that head's key rows of kv_b_proj becomes kv_rank values beside
// its rotated part, so that query . latent is the query . key of the expanded form; the attention's output over the
// latents, its first kv_rank values times the head's value rows of kv_b_proj, is the head's output (value_dim). The
// AttentionSpec of such a layer: its heads, one kv head of kv_rank + rope_dim, the rope, the expanded form's scale.
struct LatentSpec {
  int64_t q_rank = 0;  // the query through q_a_proj, its norm and q_b_proj; 0: q_proj
  int64_t kv_rank = 0, nope_dim = 0, rope_dim = 0, value_dim = 0;

  int64_t q_width(int64_t heads) const { return heads * (nope_dim + rope_dim); }
  int64_t latent_width() const { return kv_rank + rope_dim; }
};

// A Mamba2 mixer: z, x, B, C and dt projected from the input (in_proj, in that order), x, B and C through a causal
// convolution (SiLU), the scan over heads of head_dim values (B and C shared by groups of heads, state_size each),
// the output gated by SiLU(z) and RMS-normed per group (by `gate`), then out_proj.
struct Mamba2Spec {
  int64_t heads = 0, head_dim = 0, groups = 0, state_size = 0, taps = 0;
  int64_t chunk = 256;       // the prefill scan's chunk: changes only fp32 rounding, taken as transformers takes it
  bool conv_bias = false, proj_bias = false;
  double dt_min = 0, dt_max = 0;  // dt clamped to [dt_min, dt_max] (dt_max 0: no upper bound)
  double norm_eps = 1e-6;
  Mamba2Gate gate = Mamba2Gate::kGateThenNorm;
  bool out_bias = false;            // on out_proj (Falcon-H1's projectors_bias; else proj_bias's)
  // Falcon-H1's muP: the input times in_multiplier, z, x, B, C and dt's projections each times their multiplier.
  double in_multiplier = 1;
  std::array<double, 5> projection_multipliers{1, 1, 1, 1, 1};

  int64_t inner() const { return heads * head_dim; }
  int64_t conv_channels() const { return inner() + 2 * groups * state_size; }  // x, B and C
  int64_t projected() const { return inner() + conv_channels() + heads; }      // z, x, B, C and dt
};

struct ShortConvSpec {
  int64_t taps = 0;
  bool bias = false;  // on the projections and the convolution
};

struct DeltaNetSpec {
  int64_t key_heads = 0, value_heads = 0, key_dim = 0, value_dim = 0, taps = 0;
  double beta_scale = 1;  // beta = sigmoid(b) times this
  double norm_eps = 1e-6; // the gated output norm's
  // Kimi Delta Attention: the decay one a key channel (through a low-rank pair, or one projection), the output gate
  // through a low-rank pair (or one projection) and a sigmoid, the norm's weight applied in fp32; key and value heads
  // alike.
  bool kimi = false;
  double gate_lower_bound = 0;        // KDA's safe gate (Ling 3's): g = bound sigmoid(e^A_log (f + dt_bias)); 0: none
  bool decay_in_model_dtype = false;  // KDA's decay rounded to the model dtype before the rule (Ling 3's)

  int64_t key_width() const { return key_heads * key_dim; }
  int64_t value_width() const { return value_heads * value_dim; }
  int64_t conv_channels() const { return 2 * key_width() + value_width(); }  // q, k and v through the convolution
};

// How a mixture picks and weighs its experts.
// A router as data: scores from its logits, experts chosen by the scores plus an optional correction bias within
// the best groups, their weights the chosen scores renormalized, scaled, and (Gemma 4) times each expert's scale.
struct RouterSpec {
  int64_t experts = 0, per_token = 0;
  RouterScores scores = RouterScores::kSoftmax;
  bool fp32_logits = false;         // the router's input and weight in fp32 (its weight kept so at load)
  bool correction_bias = false;     // added to the scores to choose, not to weigh
  int64_t groups = 1, groups_chosen = 1;
  bool normalize = false;           // the chosen weights divided by max(sum + norm_epsilon, norm_floor)
  double norm_epsilon = 0, norm_floor = 0;
  double scaling = 1;               // routed_scaling_factor: of the weights ...
  bool scaled_after_sum = false;    // ... or of the experts' summed output
  double logit_softcap = 0;         // the fp32 logits become cap * tanh(logit / cap) before the scores; 0: not
  bool weights_fp32 = false;        // the weights stay fp32 through the experts' sum
  bool biases = false;              // on the router and on every expert's projections
  bool weight_on_input = false;     // each chosen expert reads the input times its weight; outputs summed unweighted
  int64_t shared_expert_size = 0;   // a shared expert beside the routed ones; 0: none
  bool shared_expert_gated = false; // behind a sigmoid gate (qwen2_moe)
  bool shared_expert_averaged = false;  // (routed + shared) / 2 instead of their sum
  // Gemma 4's router: its input RMS-normed without weight, times a learned scale [hidden] and hidden^-1/2; each
  // chosen weight times its expert's learned scale.
  bool scaled_input = false;
  bool expert_scales = false;
};

enum class MlpKind { kGated, kUngated, kExperts, kNone };  // kNone: the layer is its mixer alone (Nemotron-H's)

struct MlpSpec {
  MlpKind kind = MlpKind::kGated;  // down(act(gate) * up), down(act(up)), or experts each gated
  int64_t size = 0;                // the inner width (of each expert)
  Activation activation = Activation::kSilu;
  bool bias = false;               // biases on a dense MLP's projections
  double swiglu_alpha = 0, swiglu_limit = 0;  // limit > 0: gated by the clamped SwiGLU (experts and shared too)
  double gate_multiplier = 1, down_multiplier = 1;  // Falcon-H1: down(up * act(gate * this)) * that
  bool ungated_experts = false;    // experts and the shared expert down(act(up)), without a gate (Nemotron-H)
  int64_t latent_size = 0;         // experts read and write this width, projected from and back to hidden; 0: hidden
  RouterSpec router;               // experts only
};

// The norms of every layer and of the final one.
struct NormSpec {
  bool layer_norm = false;     // LayerNorm (with a bias unless bias is false); else RMSNorm
  bool bias = true;
  double eps = 1e-6;
  bool plus_one = false;       // RMSNorm scales by (1 + w) in fp32
  bool weight_in_fp32 = false; // RMSNorm multiplies by w before casting back to the model dtype
};

struct LayerSpec {
  MixerKind mixer = MixerKind::kAttention;
  AttentionSpec attention;  // kAttention's
  DeltaNetSpec delta;       // kGatedDeltaNet's
  ShortConvSpec short_conv; // kShortConv's
  Mamba2Spec mamba;         // kMamba2's
  LatentSpec latent;        // kLatentAttention's (with `attention`)
  MlpSpec mlp;
  // Which norms the layer has: before attention, on its output, before the MLP, on its output.
  bool input_norm = true, attn_out_norm = false, pre_mlp_norm = true, mlp_out_norm = false;
  // Attention and MLP both read the layer's input (the MLP through pre_mlp_norm, or the input norm's output when
  // it has none) and their outputs join the residual together.
  bool parallel = false;
  double residual_multiplier = 1;  // each block's output times this before it joins the residual
  // Falcon-H1: a Mamba2 mixer (`mamba`) beside attention on the same normed input, their outputs added; attention's
  // input and output and the Mamba2 output each times its multiplier.
  bool mamba_beside = false;
  double attention_in_multiplier = 1, attention_out_multiplier = 1, mamba_out_multiplier = 1;
  // After both blocks: the layer's slice of the per-layer inputs, gated by a projection of the residual, projected
  // back, normed and added (Gemma 4's per-layer embeddings); then the whole output times a learned scalar.
  bool per_layer_input = false;
  bool scalar = false;
  // Experts beside the dense MLP (Gemma 4's MoE): on the residual through their own norm, each block's output
  // normed, the two added before the MLP's output norm. `experts` is a kExperts spec; unused unless set.
  bool experts_beside = false;
  MlpSpec experts;
};

// A rope and the head width it rotates.
struct RopeSpec {
  RopeConfig rope;
  int64_t head_dim = 0;
};

// Queries scaled by their position p as 1 + beta ln(1 + floor((p + offset) / divisor)): Ministral 3's
// llama_4_scaling_beta (the factor rounded to the model dtype first), Llama 4's temperature tuning (offset 1, the
// product in fp32 and then rounded). beta 0: none.
struct PositionQueryScale {
  double beta = 0;
  int64_t divisor = 1, offset = 0;
  bool product_in_fp32 = false;
};

struct ModelSpec {
  std::vector<LayerSpec> layers;
  std::vector<RopeSpec> ropes;
  PositionQueryScale query_scale;  // for the layers whose AttentionSpec::query_scaled_by_position
  NormSpec norm;
  int64_t per_layer_input_size = 0;  // the width of each layer's per-layer input; 0: none
  int64_t hidden_size = 0;

  // What each layer's mixer keeps and costs: layers/mixer.h, mixer_costs.
  // Whether any layer carries recurrent state instead of keys and values (Gated DeltaNet, short convolution, Mamba2).
  bool has_recurrent_layers() const;
  // Whether every op of every layer but attention's core acts on each token alone (no recurrent state, latent
  // attention, head gate or per-layer input), so that a forward may run them on its real tokens only.
  bool token_wise() const;
};

// The layer specs of `config`.
ModelSpec model_spec(const ModelConfig& config);

}  // namespace prefix_scorer
