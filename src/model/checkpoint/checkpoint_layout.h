#pragma once
// Every checkpoint tensor a config needs, each with the layer whose device holds it and where it goes in the
// weights: the one list of checkpoint names. checkpoint_layout.cpp lists the layers' norms, attention and dense MLP
// and calls the mixers' lists (checkpoint_mixers.cpp) and the experts' (checkpoint_experts.cpp), in the order a
// synthetic model draws them (which fixes its random weights).

#include "model/checkpoint/weights.h"
#include "model/config/layer_spec.h"
#include "model/config/model_family.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace prefix_scorer {

// One checkpoint tensor, the layer whose device holds it, and where it goes in the weights: either `place`
// takes the tensor's copy, or `into` names the slice of a stack in a dtype it is copied into (a routed expert's,
// the stack made by its first expert). A routed experts' tensor kept quantized goes to `place_kept` instead.
struct WeightSlot {
  TensorSpec spec;
  int64_t layer;  // -1: the first layer's device (embeddings); num_layers: the last one's (final norm, lm_head)
  std::function<void(ModelWeights&, const at::Tensor&)> place;
  std::function<at::Tensor(ModelWeights&, at::ScalarType)> into = nullptr;
  bool fp32 = false;  // kept in fp32 whatever the model's dtype (a router transformers keeps in fp32)
  // The Linear of layer `layer` whose weight this tensor is, whole and as stored (so that it may be kept in the
  // checkpoint's form); null: a tensor placed otherwise.
  Linear LayerWeights::*projection = nullptr;
  // Takes the views of a routed experts' tensor kept quantized (and copies them to the layer's device); null: the
  // tensor is not an experts'.
  std::function<void(ModelWeights&, const QuantizedExperts&)> place_kept = nullptr;
};

inline at::ScalarType slot_dtype(const WeightSlot& slot, at::ScalarType dtype) {
  return slot.fp32 ? at::kFloat : dtype;
}

// What a load walks, made once from the config it loads (its vocabulary and tying settled): the layer specs, and
// every checkpoint tensor with its slot in the weights.
struct ModelLayout {
  ModelSpec spec;
  std::vector<WeightSlot> slots;
};
ModelLayout model_layout(const ModelConfig& c);

// The embeddings' checkpoint name: the layout's first tensor.
std::string embeddings_name(const ModelConfig& c);

// Where a layer's tensor goes: a member of LayerWeights, or the weight or bias of one of its Linears.
using LayerTensor = std::function<at::Tensor&(LayerWeights&)>;
// A Linear's weight: a LayerTensor that names its Linear, so that a tensor placed whole into it (LayerLayout::add)
// may be kept in the checkpoint's form.
struct ProjectionWeight {
  Linear LayerWeights::*member;
  at::Tensor& operator()(LayerWeights& l) const { return (l.*member).weight; }
};
ProjectionWeight weight_of(Linear LayerWeights::*member);
LayerTensor bias_of(Linear LayerWeights::*member);

// The checkpoint name of layer `layer`'s tensor `suffix` ("model.layers.N.suffix" under the family's names).
std::string layer_name(const ModelFamily& family, int64_t layer, const std::string& suffix);

// Checkpoint tensor `name` of layer `i`, taken as it is into `member` (a projection's weight: which may stay in the
// checkpoint's quantized form).
void add_layer_tensor(std::vector<WeightSlot>& slots, int64_t i, const std::string& name, std::vector<int64_t> shape,
                      LayerTensor member);
void add_layer_tensor(std::vector<WeightSlot>& slots, int64_t i, const std::string& name, std::vector<int64_t> shape,
                      ProjectionWeight weight);
// A depthwise convolution's weight `name` of layer `i` ([channels, 1, taps] as saved), kept [channels, taps].
void add_depthwise_conv(std::vector<WeightSlot>& slots, int64_t i, const std::string& name, int64_t channels,
                        int64_t taps, LayerTensor member);
// Checkpoint tensors kept apart ([rows, ...] each, `inner` the rest of each shape) written one after another into
// the rows of one joined tensor `member` of layer `i`, [sum of rows, product of inner], in the order given.
void add_joined_rows(std::vector<WeightSlot>& slots, int64_t i, const std::string& prefix,
                     const std::vector<std::pair<const char*, int64_t>>& parts, const std::vector<int64_t>& inner,
                     LayerTensor member);
// Rows [offset, offset + rope) of every block of `block` rows (weights [rows, in] or biases [rows]) from an
// interleaved rope's pairs to halves, the other rows as they are.
at::Tensor rope_rows_to_halves(const at::Tensor& t, int64_t block, int64_t offset, int64_t rope);

// One layer's tensors being listed: its spec, its family's names, and the adders its parts share.
struct LayerLayout {
  std::vector<WeightSlot>& slots;
  const ModelConfig& c;
  const ModelFamily& family;
  const ModelSpec& spec;
  const LayerSpec& layer;
  int64_t i;  // the layer's index
  int64_t h;  // the hidden width

  std::string name(const std::string& suffix) const { return layer_name(family, i, suffix); }
  // Tensor `suffix` into `member`; a projection stored [in, out] (Conv1D) is transposed to [out, in] first.
  void add(const std::string& suffix, std::vector<int64_t> shape, LayerTensor member);
  void add(const std::string& suffix, std::vector<int64_t> shape, ProjectionWeight weight);
  // Rows of one fused tensor split among several members (q, k, v; gate, up), in order.
  void add_split(const std::string& suffix, std::vector<int64_t> shape,
                 std::vector<std::pair<LayerTensor, int64_t>> parts);
};

// The mixers' tensors (checkpoint_mixers.cpp), each after `prefix` ("model.layers.N." and the mixer's module).
// Latent attention as DeepSeek V3 names it (the output projection under the family's o_proj name; a head gate as
// Ling 3's g_proj); with an interleaved rope, the rotated rows of q and kv_a reordered to halves; kv_b_proj split
// into each head's key rows and value rows.
void add_latent_attention(std::vector<WeightSlot>& slots, const LatentSpec& m, const AttentionSpec& a, int64_t h,
                          int64_t i, const std::string& prefix, bool interleaved, const std::string& o_proj);
// A Gated DeltaNet in the family's layout (ModelFamily::deltanet; KDA's output projection under its o_proj name).
void add_gated_deltanet(std::vector<WeightSlot>& slots, const DeltaNetSpec& d, int64_t h, int64_t i,
                        const std::string& prefix, const ModelFamily& family);
// A short convolution, as LFM2 names it.
void add_short_conv(std::vector<WeightSlot>& slots, const ShortConvSpec& s, int64_t h, int64_t i,
                    const std::string& prefix);
// A Mamba2 mixer, as transformers names it.
void add_mamba2(std::vector<WeightSlot>& slots, const Mamba2Spec& m, int64_t h, int64_t i, const std::string& prefix);

// The experts' tensors (checkpoint_experts.cpp).
// Experts beside the dense MLP (Gemma 4's): the router (its projection, input scale and per-expert scales), gate and
// up [experts, 2 x ff, hidden] in one tensor (gate's rows first), down [experts, hidden, ff], the norms around both.
void add_experts_beside(LayerLayout& l);
// A layer whose MLP is routed experts: the router (and its correction bias), the experts as the family stores them
// (stacked, stacked by rows, or one by one into preallocated stacks), latent projections, the shared expert.
void add_routed_experts(LayerLayout& l);

}  // namespace prefix_scorer
