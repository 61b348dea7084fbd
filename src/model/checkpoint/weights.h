#pragma once
// The tensors of a model: which ones a config needs, and their placement on devices.

#include "model/config/model_config.h"
#include "model/ops/linear.h"
#include "model/ops/quantized_experts.h"
#include "prefix_scorer/devices.h"
#include "prefix_scorer/model.h"

#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace prefix_scorer {

// A shared expert's projections: [ff, hidden], [ff, hidden], [hidden, ff]; biases under use_bias (ernie4_5_moe).
struct ExpertWeights {
  Linear gate, up, down;
};

// One projection of a layer's routed experts: [experts, out, in] in the model's dtype, or kept as the checkpoint
// stores it (then `weight` is undefined).
struct ExpertStack {
  at::Tensor weight;
  QuantizedExperts kept;
  bool defined() const { return weight.defined() || kept.defined(); }
};

// A layer's routed experts, stacked for grouped matmuls: [experts, ff, hidden] (gate, up), [experts, hidden, ff].
struct StackedExperts {
  ExpertStack gate, up, down;
  at::Tensor gate_bias, up_bias, down_bias;  // [experts, ff], [experts, ff], [experts, hidden] (gpt_oss); else undefined
};

struct LayerWeights {
  c10::Device device = c10::kCPU;
  at::Tensor input_norm;                 // before attention
  at::Tensor post_norm;                  // before the MLP (post_attention_layernorm, or gemma2's pre_feedforward)
  at::Tensor input_norm_bias, post_norm_bias;  // LayerNorm's (starcoder2); else undefined
  at::Tensor attn_out_norm, mlp_out_norm;  // on the attention's and the MLP's outputs (sandwich norms only)
  Linear q, k, v, o;  // weights [out, in] (q, k and v: views of qkv's rows); biases undefined when the config has none
  Linear qkv;         // q, k and v stacked, one matmul a forward; undefined for a layer without k and v
  at::Tensor q_norm, k_norm;               // qwen3 and gemma3 only
  at::Tensor qk_norm;  // per-head norms: [heads + kv_heads, head_dim], q_norm's rows then k_norm's; else undefined
  at::Tensor sinks;                        // [heads]: each head's sink logit (gpt_oss); else undefined
  Linear gate, up, down;  // gate undefined in an ungated MLP (gate and up: views of gate_up)
  Linear gate_up;         // gate and up stacked, one matmul a forward; undefined unless gated and dense
  // MoE layers instead of gate, up and down:
  Linear router;                       // [experts, hidden]; its bias [experts] (gpt_oss)
  at::Tensor correction_bias;          // [experts]: added to the scores to choose experts; else undefined
  StackedExperts experts;              // undefined tensors in dense layers
  ExpertWeights shared_expert;         // undefined without one
  Linear shared_expert_gate;           // [1, hidden] (qwen2_moe); else undefined
  // Gemma 4's per-layer input: gate [per_layer, hidden], projection [hidden, per_layer], its norm [hidden]; and
  // the layer's scalar [1]. Undefined elsewhere.
  Linear per_layer_gate, per_layer_projection;
  at::Tensor per_layer_norm;
  at::Tensor scalar;
  // Gemma 4's experts beside the MLP (in `router` and `experts` above): the router's input scale [hidden] and each
  // expert's scale [experts]; the norms on the MLP's output, on the experts' input and on their output [hidden].
  at::Tensor router_scale, expert_scales;
  // Apertus's xIELU: alpha_p and alpha_n [1] (through softplus), beta and eps (scalars).
  at::Tensor xielu_alpha_p, xielu_alpha_n, xielu_beta, xielu_eps;
  at::Tensor dense_out_norm, experts_in_norm, experts_out_norm;
  Linear attn_gate;  // Qwen 3.5's output gate [heads * head_dim, hidden] (q_proj's second half)
  Linear head_gate;  // LFM3's [heads, hidden]: each head's output times sigmoid of its row times the input
  // A Gated DeltaNet layer's (o is its out_proj): q, k and v's projection [2 key width + value width, hidden], the
  // output gate's [value width, hidden], beta's and the decay's [value heads, hidden], the convolution [channels,
  // taps], the decay's dt_bias and A_log [value heads], the gated norm's weight [value head dim]. KDA's: the decay's
  // and the gate's low-rank pairs (delta_a [head dim, hidden] then delta_a_up [key width, head dim]; delta_z then
  // delta_z_up), dt_bias [key width].
  Linear delta_qkv, delta_z, delta_b, delta_a, delta_a_up, delta_z_up;
  at::Tensor delta_conv, delta_dt_bias, delta_a_log, delta_norm;
  // A short-convolution layer's (LFM2; o is its out_proj): B, C and x's projection [3 hidden, hidden]
  // and its bias, the convolution [hidden, taps] and its bias.
  Linear conv_in;
  at::Tensor conv, conv_bias;
  // Nemotron-H's latent projections around its experts: into their width and back.
  Linear latent_in, latent_out;
  // A Mamba2 mixer's: in_proj, the convolution [channels, taps], A_log, D, dt_bias, the gated norm's weight,
  // out_proj; Falcon-H1's multipliers of in_proj's rows (made at load; undefined: none).
  Linear mamba_in, mamba_out;
  at::Tensor mamba_conv, mamba_conv_bias, mamba_a_log, mamba_d, mamba_dt_bias, mamba_norm, mamba_mup;
  at::Tensor qkv_scale;  // Falcon-H1's key multiplier on the keys' rows of qkv (fp32; undefined: none)
  // Multi-head latent attention's (q: q_proj, or q_b_proj after q_a_proj; o: o_proj): q_a_proj [q_rank, hidden] and
  // its norm, kv_a_proj_with_mqa [kv_rank + rope, hidden] and its norm [kv_rank], with their biases (qkv: q_a or q,
  // and kv_a stacked, one matmul, with their biases); kv_b_proj's key rows [heads, nope, kv_rank] and value rows
  // [heads, value, kv_rank].
  Linear q_a, kv_a;
  at::Tensor q_a_norm, kv_a_norm, key_up, value_up;
};

struct ModelWeights {
  at::Tensor embed;       // on the first layer's device
  at::Tensor position_embed;  // gpt2's learned positions [max_position_embeddings, hidden], there too; else undefined
  std::vector<LayerWeights> layers;
  at::Tensor final_norm;  // on the last layer's device
  at::Tensor final_norm_bias;  // LayerNorm's (starcoder2); else undefined
  Linear lm_head;  // on the last layer's device (a copy of embed when tied across devices); its bias phi's
  // Gemma 4's per-layer inputs, on the first layer's device: the table [per_layer_vocab, layers x per_layer], the
  // projection of the embeddings [layers x per_layer, hidden] and its norm [per_layer]. Undefined elsewhere.
  at::Tensor per_layer_embed, per_layer_projection_norm;
  Linear per_layer_model_projection;
  // Weights the checkpoint holds beside the text model and that are never loaded (a multimodal checkpoint's vision
  // tower and projector), counted for the parameter total as transformers counts the whole model.
  int64_t unloaded_parameters = 0;
  // The parameters of the tensors loaded, as transformers counts them (buffers saved beside them left out).
  int64_t parameters = 0;
  // The bytes the loaded tensors hold, and those of them in projections kept in the checkpoint's quantized form.
  int64_t resident_bytes = 0, quantized_bytes = 0;
  // What a forward holds at once to dequantize them (prefix_scorer/model.h).
  DequantizeWorkspace dequantize_workspace;
};

// The output layer's checkpoint names (its weight is absent from checkpoints with tied embeddings).
struct OutputLayerNames {
  std::string weight, bias;
};
OutputLayerNames output_layer_names(const ModelConfig& config);

// A tensor a checkpoint must provide, under its Hugging Face name.
struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;  // as stored
  bool stored_in_out = false;  // a projection stored [in, out], as GPT-2's Conv1D saves it (transposed at load)
};

struct ModelLayout;  // checkpoint_layout.h: the layer specs and the checkpoint's tensors of a config, made once a load

// Every tensor of `layout`, in its fixed order.
std::vector<TensorSpec> expected_tensors(const ModelLayout& layout);

// The bytes of `config`'s weights (laid out as `layout`) in `dtype`, by where they fall (a tied output layer counted
// on the last device too, where a model split over devices keeps its copy).
WeightBytes weight_bytes(const ModelConfig& config, const ModelLayout& layout, at::ScalarType dtype);

// Produces the tensor for a spec, on any device (read from a checkpoint, or drawn at random on `device`).
using TensorSource = std::function<at::Tensor(const TensorSpec&, c10::Device device)>;

// A projection's weight kept in the checkpoint's quantized form for activations of a dtype on a device: a Linear
// with only int4 or fp8 set; an undefined one where it is not stored so, or cannot be kept so.
using KeptWeightSource = std::function<Linear(const TensorSpec&, c10::Device, at::ScalarType)>;
// A routed experts' tensor kept in the checkpoint's quantized form: its stack (one expert's tensor: a stack of one)
// as views, which its slot copies to its device; nullopt where it is not stored so, or cannot be kept so.
using KeptExpertsSource = std::function<std::optional<QuantizedExperts>(const TensorSpec&)>;
// What stays in the checkpoint's quantized form: projections' weights, and routed experts.
struct KeptForms {
  KeptWeightSource projection;
  KeptExpertsSource experts;
};

// Fetches every expected tensor from `source`, and copies it to its layer's device in `dtype` (one copy, which
// the weights own: a source may hand out views of a mapped file); a projection's weight or an experts' tensor that
// `kept` keeps is taken from it instead. Projections that read the same input are then stacked (q, k, v; gate, up),
// the separate ones left as views of the stack.
ModelWeights assemble_weights(const ModelConfig& config, const ModelLayout& layout, const TensorSource& source,
                              const std::vector<c10::Device>& layer_devices, at::ScalarType dtype,
                              const KeptForms& kept = {});

}  // namespace prefix_scorer
