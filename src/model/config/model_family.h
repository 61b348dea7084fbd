#pragma once
// What sets each supported model family apart, as data: the config.json keys and defaults its transformers config
// class reads, the traits its modeling file runs, and its checkpoint's tensor names. One entry per `model_type`,
// made in the family's own file (src/model/families/); config parsing, config writing and the weight loader read
// these traits and never compare names.

#include "model/config/model_config.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace prefix_scorer {

// Which layers are mixtures of experts.
enum class MoeLayerRule {
  kAll,
  kSparseStep,     // every decoder_sparse_step-th but mlp_only_layers (qwen2_moe, qwen3_moe)
  kFirstDense,     // all but the first first_k_dense_replace (DeepSeek V3, glm4_moe)
  kStartEndEvery,  // every moe_layer_interval-th from moe_layer_start_index to moe_layer_end_index (ernie4_5_moe)
  kMlpLayerTypes,  // mlp_layer_types' "sparse" ones (dense or sparse by layer; by default kFirstDense's)
};

// Mixture-of-experts layers, as each family's config and checkpoint have them: the router's kind as data.
struct ExpertTraits {
  bool present = false;
  // Config keys and defaults.
  const char* experts_key = nullptr;  // the number of experts; nullptr: num_local_experts, else num_experts
  const char* per_token_key = "num_experts_per_tok";  // an integer, or one per layer (hunyuan_v1_moe's moe_topk)
  int64_t default_experts = 0;
  int64_t default_per_token = 0;
  bool dense_sized = false;       // experts are intermediate_size wide; no moe_intermediate_size key (mixtral)
  int64_t default_size = 0;       // moe_intermediate_size when absent
  MoeLayerRule layers = MoeLayerRule::kAll;
  int64_t default_first_dense = 0;  // first_dense_key's value when absent
  // the dense layers in front (LFM2-MoE: num_dense_layers; nullptr: the default alone)
  const char* first_dense_key = "first_k_dense_replace";
  // The router.
  RouterScores scores = RouterScores::kSoftmax;
  bool router_fp32 = false;       // its weight (and correction bias) kept in fp32, its logits computed in fp32
  bool always_normalized = false; // routing weights renormalized whatever norm_topk_prob says (mixtral) ...
  bool normalized_by_default = false;  // ... or norm_topk_prob's default (glm4_moe)
  double norm_epsilon = 0;        // added to the chosen weights' sum (DeepSeek's 1e-20)
  const char* norm_floor_key = nullptr;  // the sum's floor, default 1e-12 (ERNIE's moe_norm_min)
  bool grouped = false;           // n_group and topk_group read ...
  int64_t default_groups = 1, default_groups_chosen = 1;  // ... and their defaults
  bool scaled = false;            // the routing weights' scale read (under scaling_key) ...
  double default_scaling = 1.0;   // ... and its default
  const char* scaling_key = "routed_scaling_factor";
  bool routing_fp32 = false;      // routing weights stay fp32 through the experts' sum (mixtral)
  // Shared experts: qwen2_moe's one behind a sigmoid gate (shared_expert_intermediate_size, this default; 0: none),
  // DeepSeek's count of experts' widths (this key and default), or one MLP as wide as the dense one (hunyuan).
  int64_t default_shared_size = 0;
  const char* shared_count_key = nullptr;
  int64_t default_shared_count = 0;
  bool shared_dense_sized = false;
  // Experts stacked in one tensor per projection, gate and up interleaved in gate_up_proj ([experts, hidden,
  // 2 x ff]; down_proj [experts, ff, hidden]), with biases on them and on the router (named `router`.weight/.bias).
  bool stacked = false;
  // Experts stacked in one tensor per projection, gate's rows then up's in `gate` ([experts, 2 x ff, hidden]) and
  // down in `down` ([experts, hidden, ff]), without biases (Granite 4's input_linear and output_linear).
  bool gate_up_rows = false;
  // Experts stacked in one tensor per projection, gate's columns then up's in `gate` ([experts, hidden, 2 x ff]) and
  // down in `down` ([experts, ff, hidden]), without biases (Llama 4's experts.gate_up_proj and down_proj).
  bool gate_up_columns = false;
  // Whether the experts are saved one by one (each projection of each expert its own tensor).
  bool saved_one_by_one() const { return !stacked && !gate_up_rows && !gate_up_columns; }
  bool clamped_swiglu = false;       // experts gate by the clamped SwiGLU (swiglu_alpha, swiglu_limit read)
  // Checkpoint names after "model.layers.N.": the router, expert e's projections (with {} for e), the correction
  // bias (nullptr: none; [experts], or [1, experts] where correction_bias_row), and the shared expert's module.
  const char* router = "";
  const char* gate = "";
  const char* up = "";
  const char* down = "";
  const char* correction_bias = nullptr;
  bool correction_bias_row = false;
  const char* correction_bias_key = nullptr;  // the bias only where this key is true (default true); nullptr: always
  bool correction_bias_parameter = false;  // a parameter in transformers (counted), not a buffer
  bool correction_bias_fp32 = false;  // kept fp32 though the router is not
  const char* logit_softcap_key = nullptr;  // the router's fp32 logits soft-capped by this key's value (0: none)
  bool scaled_after_sum = false;  // the scale multiplies the experts' summed output (in the model dtype), not weights
  bool shared_behind_gate = true;  // with default_shared_size: the shared expert times a sigmoid gate (qwen2_moe)
  const char* shared = "mlp.shared_expert";
  // Nemotron-H: experts (and the shared expert) without a gate (`gate` unused); the latent projections' names.
  bool ungated = false;
  const char* latent_in = nullptr;
  const char* latent_out = nullptr;
};

// Multi-head latent attention's sizes when the config omits them (kv_lora_rank, q_lora_rank, qk_nope_head_dim,
// qk_rope_head_dim, v_head_dim); kv_rank 0: the family has none.
struct LatentDefaults {
  int64_t kv_rank = 0, q_rank = 0, nope = 0, rope = 0, value = 0;
  bool fixed_layout = false;  // the rope always over interleaved pairs, the query always through q_lora_rank
  bool unrotated = false;     // no rope at all: the keys' qk_rope_head_dim part shared by the heads, unrotated (Kimi Linear)
};

// Which Gated DeltaNet a family has, if any.
enum class DeltaNetLayout {
  kNone,
  // in_proj_qkv, in_proj_z, in_proj_b, in_proj_a, conv1d, out_proj, norm (Qwen 3.5).
  kJoinedQkv,
  // As kJoinedQkv with in_proj_qkvz (each key-head group's q, k, its value heads' v, then z) and in_proj_ba (each
  // group's b, then a) fused by key-head group, split at load (Qwen3-Next).
  kFusedByKeyGroup,
  // q_proj, k_proj, v_proj, each convolved apart (q_conv1d, k_conv1d, v_conv1d), a_proj, b_proj, g_proj, o_proj,
  // o_norm (OLMo hybrid).
  kSeparateQkv,
  // Kimi Delta Attention: kSeparateQkv's q, k, v and their convolutions, a decay per key channel through the low-rank
  // pair f_a_proj, f_b_proj (dt_bias one a channel, A_log [1, 1, heads, 1]), the output gate through g_a_proj,
  // g_b_proj and a sigmoid, b_proj, o_norm, o_proj (Kimi Linear).
  kKimi,
  // Ling 3's KDA: kKimi's with the decay's and the gate's projections full-rank (f_proj, g_proj), A_log [heads], the
  // decay rounded to the model dtype, the output projection under the family's o_proj name, the convolutions, the
  // decay's bias and A_log kept fp32 (bailing_hybrid).
  kLing,
};

// Layers alternating between sliding-window and full attention (gemma2, gemma3).
struct AlternatingWindows {
  bool present = false;
  int64_t default_window = 0;       // sliding_window when absent
  int64_t period = 0;               // every period-th layer full, when layer_types is absent ...
  const char* period_key = nullptr; // ... or the config key that gives the period (its default: `period`)
  double default_attn_softcap = 0;  // attn_logit_softcapping when absent
  double default_final_softcap = 0; // final_logit_softcapping when absent
  bool first_layer_full = false;    // without layer_types, the first layer full too
};

// The config.json keys of the model's sizes (GPT-2 has its own; transformers maps the usual names onto them).
struct SizeKeys {
  const char* hidden = "hidden_size";
  const char* intermediate = "intermediate_size";  // nullptr: no dense MLP (every layer routed), no width read
  const char* layers = "num_hidden_layers";
  const char* heads = "num_attention_heads";
  const char* positions = "max_position_embeddings";
  int64_t default_intermediate_factor = 0;  // intermediate size as this many times hidden when absent (0: required)
};

// A built-in synthetic model (ModelConfig::synthetic): its name and its config.json keys, which from_json reads as
// a checkpoint's.
struct SyntheticShape {
  const char* name = "";
  nlohmann::json (*keys)() = nullptr;
};

struct ModelFamily {
  const char* model_type = "";
  // The model_type of multimodal checkpoints whose text model (text_config, where it omits its own model_type) is
  // of this family, scored alone; nullptr: none.
  const char* multimodal_wrapper = nullptr;
  // Config keys and their defaults.
  SizeKeys sizes;
  const char* activation_key = "hidden_act";   // gemma2 and gemma3 read hidden_activation
  Activation default_activation = Activation::kSilu;
  bool gelu_means_tanh = false;                // gemma's "gelu" is the tanh approximation
  int64_t default_head_dim = 0;                // 0: hidden_size / num_attention_heads
  double default_eps = 1e-6;                   // the norms' epsilon when eps_key is absent
  bool tied_by_default = false;                // tie_word_embeddings when absent
  double default_rope_theta = 10000.0;
  bool rope_keys_at_top_level = false;  // su and yarn mean longrope; original_max_position_embeddings (default 4096)
                                        // and partial_rotary_factor read from the top level
  bool local_rope_base = false;    // sliding layers' rope from rope_local_base_freq (older gemma3 configs)
  bool always_windowed = false;    // sliding_window applies without use_sliding_window (mistral, mixtral, phi3)
  bool rope_only_on_sliding = false;  // with a window, the full-attention layers rotate nothing (exaone4) ...
  bool rope_needs_window = false;     // ... and without one, no layer rotates (else every layer does)
  bool head_dim_from_heads = false;   // head_dim is hidden_size / num_attention_heads whatever the config says
  bool nope_layers = false;        // no_rope_layers (1: the layer rotates) or every no_rope_layer_interval-th layer
                                   // without rope; with use_sliding_window, the no-rope layers slide (smollm3)
  // Biases: q, k and v always; attention_bias also on o (its default: attention_bias_default); mlp_bias read.
  bool attention_bias_default = false;
  bool qkv_bias = false;
  bool attention_bias_on_o = false;
  const char* o_bias_key = nullptr;  // o's bias under a key of its own instead (seed_oss's attention_out_bias)
  bool reads_mlp_bias = false;
  bool always_mlp_bias = false;
  // The forward.
  bool qk_norm = false;
  bool qk_norm_full_width = false;
  bool qk_norm_after_rope = false;
  const char* qk_norm_key = nullptr;  // per-head q/k norms only where this key is true (glm4_moe's use_qk_norm)
  bool qk_norm_weight_per_head = false;  // the per-head q/k norms' weights differ by head ([heads, head_dim])
  const char* q_norm = "q_norm";  // the per-head norms' names after the attention module
  const char* k_norm = "k_norm";
  bool dynamic_rope_is_ntk_alpha = false;  // rope_type dynamic with an alpha: theta times alpha^(d / (d - 2)) (hunyuan)
  bool output_norms_only = false;
  bool norm_in_fp32 = false;
  bool fused_projections = false;
  bool norm_plus_one = false;      // RMSNorm scales by (1 + w) in fp32
  bool scale_embeddings = false;   // embeddings times sqrt(hidden_size)
  bool sandwich_norms = false;
  bool reads_multipliers = false;  // attention_multiplier, embedding_multiplier, residual_multiplier, logits_scaling
  // LayerNorm with biases instead of RMSNorm, its epsilon under eps_key (starcoder2).
  bool layer_norm = false;
  bool norms_without_bias = false;     // ... LayerNorms without biases (cohere)
  const char* eps_key = "rms_norm_eps";
  const char* all_bias_key = nullptr;  // one key for the biases of every projection (use_bias) ...
  bool all_bias_default = true;        // ... and its default
  bool all_bias_on_output = false;     // ... which also gives the output layer a bias (ernie4_5_moe)
  bool interleaved_rope = false;       // the rope rotates interleaved pairs of its rotated dimensions (ernie4_5,
                                       // glm4): those q and k rows reordered at load
  // An ungated MLP, down(act(up(x))): its projections' names after mlp_module (c_fc and c_proj); nullptr: gated.
  const char* mlp_up = nullptr;
  const char* mlp_down = nullptr;
  // Phi: attention and MLP in parallel on one LayerNorm, biases on every projection (and the output layer), and
  // its own names for the output projection and the final norm.
  bool parallel_block = false;
  bool always_biased = false;
  bool output_layer_bias = false;
  const char* o_proj = "o_proj";
  const char* final_norm = "model.norm";
  // Checkpoint names: the embeddings, the layers, each layer's attention module and norms, the output layer
  // (without ".weight"); GPT-NeoX's and GPT-2's differ from Llama's throughout.
  const char* embed = "model.embed_tokens";
  const char* layers = "model.layers";
  const char* attn = "self_attn";
  const char* lm_head = "lm_head";
  const char* input_norm = "input_layernorm";
  const char* post_norm = "post_attention_layernorm";
  // q, k and v in one tensor, rows q then k then v, under this name after the attention module (phi3, gpt2).
  const char* fused_qkv = nullptr;
  // GPT-2: learned absolute position embeddings (this tensor) instead of rope; every projection stored as Conv1D
  // saves it, [in, out]; scale_attn_weights and scale_attn_by_inverse_layer_idx read.
  const char* position_embed = nullptr;
  bool conv1d_weights = false;
  // q, k and v fused in one tensor by head (head 0's q, k, v rows, then head 1's, ...): its name after the
  // attention module.
  const char* qkv_by_head = nullptr;
  // Attention and MLP in parallel on their own norms unless this key is false.
  const char* parallel_residual_key = nullptr;
  const char* output_vocab_key = nullptr;  // a pruned output layer's rows (Apertus 1.5's output_vocab_size)
  const char* partial_rotary_key = "partial_rotary_factor";  // at the top level, when rope_parameters lacks it
  double default_partial_rotary = 1.0;
  const char* rotary_dim_key = nullptr;  // the rotated dimensions at the top level, where no partial_rotary_factor is
  const char* theta_key = "rope_theta";
  double default_query_pre_attn_scalar = 0;  // read from query_pre_attn_scalar when alternating windows are present
  // The rope when the config gives neither rope_parameters nor rope_scaling (gpt_oss: yarn), as JSON; nullptr: none.
  const char* default_rope_scaling = nullptr;
  // Older configs' rope_scaling is the full-attention layers' alone; sliding layers rotate unscaled (olmo3).
  bool sliding_rope_unscaled = false;
  // The attention's output times sigmoid of this projection of its input, per element (its own tensor after the
  // attention module, without bias); nullptr: none, or Qwen 3.5's gate inside q_proj (DeltaNetLayout::kJoinedQkv).
  const char* output_gate_proj = nullptr;
  // With output_gate_proj: the gate is one per head (the projection [heads, hidden]) where this key is true or
  // "per-head" (its default true), else one per element; through softplus (in fp32) instead of sigmoid.
  const char* per_head_gate_key = nullptr;
  bool softplus_gate = false;
  const char* layer_heads_key = nullptr;  // each layer's query heads (a list; else num_attention_heads)
  const char* refused_if_true = nullptr;  // a key whose true value transformers does not run: refused by name
  // The embeddings times sqrt(hidden_size) as a float (not rounded to the dtype) where this key is true (muP).
  const char* sqrt_hidden_embedding_key = nullptr;
  // The logits times this key's value (a float, in the model dtype), its default when absent; nullptr: none.
  const char* logit_scale_key = nullptr;
  double default_logit_scale = 1.0;
  bool attention_sinks = false;        // a learned logit per head in each softmax, whose weight no value takes (gpt_oss)
  bool sinks_on_sliding_only = false;   // the sinks on sliding layers alone
  const char* sinks_name = "sinks";     // their tensor after the attention module
  // Values narrower than q and k: each value head's width under this key (kept zero-padded to head_dim at load,
  // the output projection's columns with it, which changes no number); nullptr: head_dim.
  const char* value_head_dim_key = nullptr;
  int64_t default_value_head_dim = 0;
  const char* value_scale_key = nullptr;  // the values times this key's value (a float; absent: the default; null: 1)
  double default_value_scale = 1.0;
  int64_t sliding_kv_heads_factor = 1;  // sliding layers' kv heads: num_key_value_heads times this
  // The window under this key is one less than the one attended (a query sees it and itself); read where given.
  const char* window_less_one_key = nullptr;
  bool query_scale_by_position = false;  // rope_parameters' llama_4_scaling_beta scales queries by position (Llama 4's)
  // Keys of the family's own beyond these traits, read after the generic ones (the layer kinds known) and written
  // back by ModelConfig::to_json (Gemma 4's layer shapes, per-layer inputs and MoE block); nullptr: none. Before any
  // key is read, prepare_keys may rewrite the config (Nemotron-H's layer count from its layer kinds).
  void (*prepare_keys)(nlohmann::json& config) = nullptr;
  void (*read_keys)(const nlohmann::json& config, ModelConfig& c) = nullptr;
  void (*write_keys)(const ModelConfig& c, nlohmann::json& config) = nullptr;
  // Gated DeltaNet layers (linear_attention, sized by linear_num_key_heads, linear_num_value_heads,
  // linear_key_head_dim, linear_value_head_dim, linear_conv_kernel_dim) in layer_types or, without it, all but every
  // full_attention_interval-th; their checkpoint layout and the family's keys (see DeltaNetLayout).
  DeltaNetLayout deltanet = DeltaNetLayout::kNone;
  const char* deltanet_module = "linear_attn";  // their module after "model.layers.N." (Kimi Linear: self_attn)
  // The dense MLPs' module in released checkpoints where transformers saves it under mlp_module (Kimi Linear's
  // "mlp", saved back as "block_sparse_moe"): read under either; nullptr: mlp_module alone.
  const char* dense_mlp_module_as_released = nullptr;
  // The sandwich norms' names: after the mixer (nullptr: post_norm's), before and after the MLP.
  const char* mixer_out_norm = nullptr;
  const char* sandwich_pre_mlp_norm = "pre_feedforward_layernorm";
  const char* sandwich_mlp_out_norm = "post_feedforward_layernorm";
  // The MLP's module (LFM2: feed_forward), then a gated MLP's gate, up and down projections (LFM2: w1, w3, w2).
  const char* mlp_module = "mlp";
  const char* gate_proj = "gate_proj";
  const char* up_proj = "up_proj";
  const char* down_proj = "down_proj";
  const char* gate_up_proj = nullptr;  // gate and up in one tensor under this name (gate's rows first) instead
  // Mamba2 layers' module after "model.layers.N." (their keys are the family's read_keys').
  const char* mamba_module = "mamba";
  const char* quantization = nullptr;  // the one quant_method its checkpoints may carry (dequantized at load)
  // Multi-head latent attention in every layer (DeepSeek V3's keys; q_lora_rank null for q_proj directly; the rope
  // over interleaved pairs unless rope_interleave is false), its q and kv norms at epsilon 1e-6.
  LatentDefaults latent;
  // Sparse attention (DeepSeek V3.2's DSA): the key of its top-k (index_topk) and its default; served as dense
  // attention up to that many keys a query. How the names of an indexer's tensors begin after a layer's (never
  // read; their parameters counted as the checkpoint holds them).
  int64_t default_index_topk = 0;
  const char* indexer = nullptr;
  AlternatingWindows windows;
  ExpertTraits experts;
  // Its built-in synthetic shapes: released sizes, and tiny ones with its traits for tests.
  std::vector<SyntheticShape> synthetic_shapes;
};

// The model_type of the text model inside a multimodal checkpoint of `model_type` (its text_config's, when that
// omits it): gemma3 holds a gemma3_text, mistral3 a mistral (Ministral 3's say ministral3). nullptr for any other type.
const char* multimodal_text_type(const std::string& model_type);

// Every family's entry, from the families' files (src/model/families/registry.cpp).
const std::vector<ModelFamily>& registered_families();

// The family of `model_type`; throws std::invalid_argument naming it and the supported ones.
const ModelFamily& model_family(const std::string& model_type);
// The config.json keys of the built-in synthetic shape `name`, from the family that lists it; throws
// std::invalid_argument naming the known ones.
nlohmann::json synthetic_shape_keys(const std::string& name);
// Every synthetic shape's name, in the table's order.
std::vector<std::string> synthetic_shape_names();

// Every supported model_type, in the table's order, then the multimodal ones whose text model is scored.
std::vector<std::string> supported_model_types();

}  // namespace prefix_scorer
