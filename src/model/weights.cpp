#include "model/weights.h"
#include "model/stacked_weights.h"

#include "model/layer_spec.h"
#include "model/model_family.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <utility>
#include <stdexcept>

namespace prefix_scorer {
namespace {

std::string layer_name(const ModelFamily& family, int64_t layer, const std::string& suffix) {
  return fmt::format("{}.{}.{}", family.layers, layer, suffix);
}

// One checkpoint tensor, the layer whose device holds it, and where it goes in the weights: either `place`
// takes the tensor's copy, or `into` names the preallocated slice it is copied into (a routed expert's).
struct WeightSlot {
  TensorSpec spec;
  int64_t layer;  // -1: the first layer's device (embeddings); num_layers: the last one's (final norm, lm_head)
  std::function<void(ModelWeights&, const at::Tensor&)> place;
  std::function<at::Tensor(ModelWeights&)> into = nullptr;
  bool fp32 = false;  // kept in fp32 whatever the model's dtype (a router transformers keeps in fp32)
};

at::ScalarType slot_dtype(const WeightSlot& slot, at::ScalarType dtype) { return slot.fp32 ? at::kFloat : dtype; }

// Where a layer's tensor goes: a member of LayerWeights, or the weight or bias of one of its Linears.
using LayerTensor = std::function<at::Tensor&(LayerWeights&)>;

LayerTensor weight_of(Linear LayerWeights::*member) {
  return [member](LayerWeights& l) -> at::Tensor& { return (l.*member).weight; };
}

LayerTensor bias_of(Linear LayerWeights::*member) {
  return [member](LayerWeights& l) -> at::Tensor& { return (l.*member).bias; };
}

// Checkpoint tensor `name` of layer `i`, taken as it is into `member`.
void add_layer_tensor(std::vector<WeightSlot>& slots, int64_t i, const std::string& name, std::vector<int64_t> shape,
                      LayerTensor member) {
  slots.push_back({{name, std::move(shape)}, i,
                   [i, member](ModelWeights& w, const at::Tensor& t) { member(w.layers[i]) = t; }});
}

// A depthwise convolution's weight `name` of layer `i` ([channels, 1, taps] as saved), kept [channels, taps].
void add_depthwise_conv(std::vector<WeightSlot>& slots, int64_t i, const std::string& name, int64_t channels,
                        int64_t taps, LayerTensor member) {
  slots.push_back({{name, {channels, 1, taps}}, i,
                   [i, member](ModelWeights& w, const at::Tensor& t) { member(w.layers[i]) = t.squeeze(1); }});
}

// Checkpoint tensors kept apart ([rows, ...] each, `inner` the rest of each shape) written one after another into
// the rows of one joined tensor `member` of layer `i`, [sum of rows, product of inner], in the order given.
void add_joined_rows(std::vector<WeightSlot>& slots, int64_t i, const std::string& prefix,
                     const std::vector<std::pair<const char*, int64_t>>& parts, const std::vector<int64_t>& inner,
                     LayerTensor member) {
  int64_t total = 0, width = 1, offset = 0;
  for (const auto& part : parts) total += part.second;
  for (const int64_t d : inner) width *= d;
  for (const auto& [name, rows] : parts) {
    std::vector<int64_t> shape{rows};
    shape.insert(shape.end(), inner.begin(), inner.end());
    slots.push_back({{prefix + name, std::move(shape)}, i,
                     [=](ModelWeights& w, const at::Tensor& t) {
                       at::Tensor& joined = member(w.layers[i]);
                       if (!joined.defined()) joined = at::empty({total, width}, t.options());
                       joined.narrow(0, offset, rows).copy_(t.reshape({rows, width}));
                     }});
    offset += rows;
  }
}

// Stacked experts of layer `i` (checkpoint names after `layer`, as `names` gives them): the router with its bias;
// gate and up [experts, hidden, 2 x ff] in one tensor, interleaved by column, and its bias; down [experts, ff,
// hidden] and its bias. Each is split and transposed to the [experts, out, in] stacks the grouped matmuls take.
void add_stacked_experts(std::vector<WeightSlot>& slots, const MlpSpec& m, const ExpertTraits& names, int64_t h,
                         int64_t i, const std::string& layer) {
  const int64_t e = m.router.experts, ff = m.size;
  const std::string router = layer + names.router + ".", gate_up = layer + names.gate, down = layer + names.down;
  slots.push_back({{router + "weight", {e, h}}, i, [i](ModelWeights& w, const at::Tensor& t) { w.layers[i].router.weight = t; }});
  slots.push_back({{router + "bias", {e}}, i, [i](ModelWeights& w, const at::Tensor& t) { w.layers[i].router.bias = t; }});
  slots.push_back({{gate_up, {e, h, 2 * ff}}, i, [i](ModelWeights& w, const at::Tensor& t) {
                     StackedExperts& x = w.layers[i].experts;
                     x.gate = t.slice(2, 0, t.size(2), 2).transpose(1, 2).contiguous();
                     x.up = t.slice(2, 1, t.size(2), 2).transpose(1, 2).contiguous();
                   }});
  slots.push_back({{gate_up + "_bias", {e, 2 * ff}}, i, [i](ModelWeights& w, const at::Tensor& t) {
                     StackedExperts& x = w.layers[i].experts;
                     x.gate_bias = t.slice(1, 0, t.size(1), 2).contiguous();
                     x.up_bias = t.slice(1, 1, t.size(1), 2).contiguous();
                   }});
  slots.push_back({{down, {e, ff, h}}, i, [i](ModelWeights& w, const at::Tensor& t) {
                     w.layers[i].experts.down = t.transpose(1, 2).contiguous();
                   }});
  slots.push_back({{down + "_bias", {e, h}}, i,
                   [i](ModelWeights& w, const at::Tensor& t) { w.layers[i].experts.down_bias = t; }});
}

// q or k rows (weights [rows, in] or biases [rows]) of heads whose rope rotates interleaved pairs, reordered per head
// to the two halves the rope here rotates: row 2j to j, row 2j + 1 to d/2 + j.
at::Tensor halves_from_pairs(const at::Tensor& t, int64_t head_dim) {
  return t.reshape({-1, head_dim / 2, 2, t.dim() == 1 ? 1 : t.size(1)}).transpose(1, 2).reshape(t.sizes());
}

// Rows [offset, offset + rope) of every block of `block` rows (weights [rows, in] or biases [rows]) from an
// interleaved rope's pairs to halves, the other rows as they are: latent attention's rotated part of each head.
at::Tensor rope_rows_to_halves(const at::Tensor& t, int64_t block, int64_t offset, int64_t rope) {
  const int64_t columns = t.dim() == 1 ? 1 : t.size(1);
  at::Tensor blocks = t.reshape({-1, block, columns}).clone();
  const at::Tensor part = blocks.narrow(1, offset, rope);
  part.copy_(halves_from_pairs(part.reshape({-1, columns}), rope).view(part.sizes()));
  return blocks.reshape(t.sizes());
}

// A latent-attention layer's tensors (after `prefix`, "model.layers.N.self_attn."), as DeepSeek V3 names them; with
// an interleaved rope, the rotated rows of q and kv_a reordered to halves. kv_b_proj splits into each head's key
// rows and value rows (see LayerWeights).
void add_latent_attention(std::vector<WeightSlot>& slots, const LatentSpec& m, const AttentionSpec& a, int64_t h,
                          int64_t i, const std::string& prefix, bool interleaved) {
  auto add = [&](const std::string& name, std::vector<int64_t> shape, LayerTensor member) {
    add_layer_tensor(slots, i, prefix + name, std::move(shape), member);
  };
  // rows of `block` whose last rope_dim rows are rotated, as stored or reordered
  auto add_rotated = [&](const std::string& name, std::vector<int64_t> shape, int64_t block, LayerTensor member) {
    if (!interleaved) return add(name, std::move(shape), member);
    const int64_t rope = m.rope_dim;
    slots.push_back({{prefix + name, std::move(shape)}, i, [=](ModelWeights& w, const at::Tensor& t) {
                       member(w.layers[i]) = rope_rows_to_halves(t, block, block - rope, rope);
                     }});
  };
  const int64_t q_head = m.nope_dim + m.rope_dim;
  if (m.q_rank > 0) {
    add("q_a_proj.weight", {m.q_rank, h}, weight_of(&LayerWeights::q_a));
    if (a.qkv_bias) add("q_a_proj.bias", {m.q_rank}, bias_of(&LayerWeights::q_a));
    add("q_a_layernorm.weight", {m.q_rank}, &LayerWeights::q_a_norm);
    add_rotated("q_b_proj.weight", {m.q_width(a.heads), m.q_rank}, q_head, weight_of(&LayerWeights::q));
  } else {
    add_rotated("q_proj.weight", {m.q_width(a.heads), h}, q_head, weight_of(&LayerWeights::q));
  }
  add_rotated("kv_a_proj_with_mqa.weight", {m.latent_width(), h}, m.latent_width(), weight_of(&LayerWeights::kv_a));
  if (a.qkv_bias) add_rotated("kv_a_proj_with_mqa.bias", {m.latent_width()}, m.latent_width(), bias_of(&LayerWeights::kv_a));
  add("kv_a_layernorm.weight", {m.kv_rank}, &LayerWeights::kv_a_norm);
  const int64_t heads = a.heads;
  slots.push_back({{prefix + "kv_b_proj.weight", {heads * (m.nope_dim + m.value_dim), m.kv_rank}}, i,
                   [=](ModelWeights& w, const at::Tensor& t) {
                     const at::Tensor by_head = t.view({heads, m.nope_dim + m.value_dim, m.kv_rank});
                     w.layers[i].key_up = by_head.narrow(1, 0, m.nope_dim).contiguous();
                     w.layers[i].value_up = by_head.narrow(1, m.nope_dim, m.value_dim).contiguous();
                   }});
  add("o_proj.weight", {h, heads * m.value_dim}, weight_of(&LayerWeights::o));
  if (a.o_bias) add("o_proj.bias", {h}, bias_of(&LayerWeights::o));
}

// `experts` experts of layer `i` stacked by rows: gate's then up's [experts, 2 x ff, hidden] under `gate_up`, down
// [experts, hidden, ff] under `down`.
void add_row_stacked_experts(std::vector<WeightSlot>& slots, int64_t i, const std::string& gate_up,
                             const std::string& down, int64_t experts, int64_t ff, int64_t h) {
  slots.push_back({{gate_up, {experts, 2 * ff, h}}, i, [i, ff](ModelWeights& w, const at::Tensor& t) {
                     w.layers[i].experts.gate = t.narrow(1, 0, ff).contiguous();
                     w.layers[i].experts.up = t.narrow(1, ff, ff).contiguous();
                   }});
  slots.push_back({{down, {experts, h, ff}}, i, [i](ModelWeights& w, const at::Tensor& t) { w.layers[i].experts.down = t; }});
}

// Gemma 4's experts beside the dense MLP in layer `i`: the router (its projection, input scale and per-expert
// scales), gate and up [experts, 2 x ff, hidden] in one tensor (gate's rows first), down [experts, hidden, ff], and
// the norms around both blocks.
void add_experts_beside(std::vector<WeightSlot>& slots, const MlpSpec& m, int64_t h, int64_t i, const std::string& layer) {
  const int64_t e = m.router.experts, ff = m.size;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, LayerTensor member) {
    add_layer_tensor(slots, i, layer + name, std::move(shape), member);
  };
  add("router.proj.weight", {e, h}, weight_of(&LayerWeights::router));
  add("router.scale", {h}, &LayerWeights::router_scale);
  add("router.per_expert_scale", {e}, &LayerWeights::expert_scales);
  add_row_stacked_experts(slots, i, layer + "experts.gate_up_proj", layer + "experts.down_proj", e, ff, h);
  add("post_feedforward_layernorm_1.weight", {h}, &LayerWeights::dense_out_norm);
  add("pre_feedforward_layernorm_2.weight", {h}, &LayerWeights::experts_in_norm);
  add("post_feedforward_layernorm_2.weight", {h}, &LayerWeights::experts_out_norm);
}

// A Gated DeltaNet layer's tensors (after `prefix`, "model.layers.N.linear_attn.") in the family's layout.
void add_gated_deltanet(std::vector<WeightSlot>& slots, const DeltaNetSpec& d, int64_t h, int64_t i,
                        const std::string& prefix, DeltaNetLayout layout) {
  auto add = [&](const std::string& name, std::vector<int64_t> shape, LayerTensor member) {
    add_layer_tensor(slots, i, prefix + name, std::move(shape), member);
  };
  const int64_t groups = d.key_heads, per_group = d.value_heads / d.key_heads;
  switch (layout) {
    case DeltaNetLayout::kSeparateQkv: {  // q, k and v apart, written into the convolution's channels in that order
      add_joined_rows(slots, i, prefix,
                      {{"q_proj.weight", d.key_width()}, {"k_proj.weight", d.key_width()}, {"v_proj.weight", d.value_width()}},
                      {h}, weight_of(&LayerWeights::delta_qkv));
      add("g_proj.weight", {d.value_width(), h}, weight_of(&LayerWeights::delta_z));
      add("b_proj.weight", {d.value_heads, h}, weight_of(&LayerWeights::delta_b));
      add("a_proj.weight", {d.value_heads, h}, weight_of(&LayerWeights::delta_a));
      break;
    }
    case DeltaNetLayout::kFusedByKeyGroup: {
      const int64_t kd = d.key_dim, vd = per_group * d.value_dim;  // a group's key rows, and its value (or z) rows
      slots.push_back({{prefix + "in_proj_qkvz.weight", {d.conv_channels() + d.value_width(), h}}, i,
                       [=](ModelWeights& w, const at::Tensor& t) {
                         const std::vector<at::Tensor> p = t.view({groups, 2 * kd + 2 * vd, h}).split_with_sizes({kd, kd, vd, vd}, 1);
                         auto rows = [h](const at::Tensor& part) { return part.reshape({-1, h}); };
                         w.layers[i].delta_qkv.weight = at::cat({rows(p[0]), rows(p[1]), rows(p[2])});
                         w.layers[i].delta_z.weight = rows(p[3]);
                       }});
      slots.push_back({{prefix + "in_proj_ba.weight", {2 * d.value_heads, h}}, i,
                       [=](ModelWeights& w, const at::Tensor& t) {
                         const std::vector<at::Tensor> p = t.view({groups, 2 * per_group, h}).split(per_group, 1);
                         w.layers[i].delta_b.weight = p[0].reshape({-1, h});
                         w.layers[i].delta_a.weight = p[1].reshape({-1, h});
                       }});
      break;
    }
    case DeltaNetLayout::kJoinedQkv:
    case DeltaNetLayout::kNone:
      add("in_proj_qkv.weight", {d.conv_channels(), h}, weight_of(&LayerWeights::delta_qkv));
      add("in_proj_z.weight", {d.value_width(), h}, weight_of(&LayerWeights::delta_z));
      add("in_proj_b.weight", {d.value_heads, h}, weight_of(&LayerWeights::delta_b));
      add("in_proj_a.weight", {d.value_heads, h}, weight_of(&LayerWeights::delta_a));
      break;
  }
  const bool separate = layout == DeltaNetLayout::kSeparateQkv;
  if (separate) {  // q's, k's and v's convolutions apart, joined in that order
    add_joined_rows(slots, i, prefix,
                    {{"q_conv1d.weight", d.key_width()}, {"k_conv1d.weight", d.key_width()}, {"v_conv1d.weight", d.value_width()}},
                    {1, d.taps}, &LayerWeights::delta_conv);
  } else {
    add_depthwise_conv(slots, i, prefix + "conv1d.weight", d.conv_channels(), d.taps, &LayerWeights::delta_conv);
  }
  add("dt_bias", {d.value_heads}, &LayerWeights::delta_dt_bias);
  add("A_log", {d.value_heads}, &LayerWeights::delta_a_log);
  add(separate ? "o_norm.weight" : "norm.weight", {d.value_dim}, &LayerWeights::delta_norm);
  add(separate ? "o_proj.weight" : "out_proj.weight", {h, d.value_width()}, weight_of(&LayerWeights::o));
}

// A short-convolution layer's tensors (after `prefix`, "model.layers.N.conv."), as LFM2 names them.
void add_short_conv(std::vector<WeightSlot>& slots, const ShortConvSpec& s, int64_t h, int64_t i,
                    const std::string& prefix) {
  auto add = [&](const std::string& name, std::vector<int64_t> shape, LayerTensor member) {
    add_layer_tensor(slots, i, prefix + name, std::move(shape), member);
  };
  add("in_proj.weight", {3 * h, h}, weight_of(&LayerWeights::conv_in));
  add_depthwise_conv(slots, i, prefix + "conv.weight", h, s.taps, &LayerWeights::conv);
  add("out_proj.weight", {h, h}, weight_of(&LayerWeights::o));
  if (!s.bias) return;
  add("in_proj.bias", {3 * h}, bias_of(&LayerWeights::conv_in));
  add("conv.bias", {h}, &LayerWeights::conv_bias);
  add("out_proj.bias", {h}, bias_of(&LayerWeights::o));
}

// A Mamba2 layer's tensors (after `prefix`, "model.layers.N.mamba."), as transformers names them.
void add_mamba2(std::vector<WeightSlot>& slots, const Mamba2Spec& m, int64_t h, int64_t i, const std::string& prefix) {
  auto add = [&](const std::string& name, std::vector<int64_t> shape, LayerTensor member) {
    add_layer_tensor(slots, i, prefix + name, std::move(shape), member);
  };
  add("in_proj.weight", {m.projected(), h}, weight_of(&LayerWeights::mamba_in));
  if (m.proj_bias) add("in_proj.bias", {m.projected()}, bias_of(&LayerWeights::mamba_in));
  add_depthwise_conv(slots, i, prefix + "conv1d.weight", m.conv_channels(), m.taps, &LayerWeights::mamba_conv);
  if (m.conv_bias) add("conv1d.bias", {m.conv_channels()}, &LayerWeights::mamba_conv_bias);
  add("A_log", {m.heads}, &LayerWeights::mamba_a_log);
  add("D", {m.heads}, &LayerWeights::mamba_d);
  add("dt_bias", {m.heads}, &LayerWeights::mamba_dt_bias);
  if (m.gate != Mamba2Gate::kGateOnly) add("norm.weight", {m.inner()}, &LayerWeights::mamba_norm);
  add("out_proj.weight", {h, m.inner()}, weight_of(&LayerWeights::mamba_out));
  if (m.out_bias) add("out_proj.bias", {h}, bias_of(&LayerWeights::mamba_out));
}

// Every tensor `c` needs, in the order a synthetic model draws them (which fixes its random weights), each with
// where it goes: the one list of checkpoint names.
std::vector<WeightSlot> checkpoint_layout(const ModelConfig& c) {
  const int64_t h = c.hidden_size;
  const ModelFamily& family = model_family(c.model_type);
  const ModelSpec spec = model_spec(c);
  const std::string attn = std::string(family.attn) + ".";
  std::vector<WeightSlot> slots;
  slots.push_back({{std::string(family.embed) + ".weight", {c.vocab_size, h}}, -1,
                   [](ModelWeights& w, const at::Tensor& t) { w.embed = t; }});
  if (c.learned_positions)
    slots.push_back({{std::string(family.position_embed) + ".weight", {c.max_position_embeddings, h}}, -1,
                     [](ModelWeights& w, const at::Tensor& t) { w.position_embed = t; }});
  const std::string input_norm = std::string(family.input_norm) + ".", post_norm = std::string(family.post_norm) + ".";
  const std::string mlp_module = std::string(family.mlp_module) + ".";
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const LayerSpec& layer = spec.layers[i];
    const AttentionSpec& a = layer.attention;
    const MlpSpec& m = layer.mlp;
    const int64_t q_out = a.q_width(), kv_out = a.kv_width(), ff = m.size;
    // A tensor, or rows of one fused tensor split among several (q, k, v; gate, up), in order. A projection stored
    // [in, out] (Conv1D) is transposed to [out, in] first.
    auto add_split = [&](const std::string& suffix, std::vector<int64_t> shape,
                         std::vector<std::pair<LayerTensor, int64_t>> parts) {
      const bool in_out = family.conv1d_weights && shape.size() == 2;
      if (in_out) std::swap(shape[0], shape[1]);
      slots.push_back({{layer_name(family, i, suffix), std::move(shape), in_out}, i,
                       [i, parts, in_out](ModelWeights& w, const at::Tensor& stored) {
                         const at::Tensor t = in_out ? stored.t().contiguous() : stored;
                         int64_t row = 0;
                         for (const auto& [member, rows] : parts) {
                           member(w.layers[i]) = parts.size() == 1 ? t : t.narrow(0, row, rows);
                           row += rows;
                         }
                       }});
    };
    auto add = [&](const std::string& suffix, std::vector<int64_t> shape, LayerTensor member) {
      add_split(suffix, std::move(shape), {{member, 0}});
    };
    // q or k, whose rotated rows (each head's first rotary_dim) a rope of interleaved pairs reorders; with
    // `norm_weight`, q's or k's norm weight, whose values follow those rows (taken flat, a head_dim a head).
    auto add_q_or_k = [&](const std::string& suffix, std::vector<int64_t> shape, LayerTensor member,
                          bool norm_weight = false) {
      if (!c.interleaved_rope) return add(suffix, std::move(shape), member);
      const int64_t head_dim = a.head_dim;
      const int64_t rotated = a.rope < 0 ? 0 : spec.ropes[a.rope].rope.rotary_dim(head_dim);
      slots.push_back({{layer_name(family, i, suffix), std::move(shape)}, i,
                       [i, member, head_dim, rotated, norm_weight](ModelWeights& w, const at::Tensor& t) {
                         const at::Tensor rows = norm_weight ? t.reshape({-1}) : t;
                         member(w.layers[i]) =
                             rotated == 0 ? t : rope_rows_to_halves(rows, head_dim, 0, rotated).view(t.sizes());
                       }});
    };
    // v's weight (or bias): rows of value heads that may be narrower than head_dim, each zero-padded to it.
    auto add_values = [&](const std::string& suffix, bool weight) {
      const LayerTensor member = weight ? weight_of(&LayerWeights::v) : bias_of(&LayerWeights::v);
      if (a.value_head_dim == a.head_dim) return add(suffix, weight ? std::vector<int64_t>{kv_out, h} : std::vector<int64_t>{kv_out}, member);
      const int64_t kv = a.kv_heads, head_dim = a.head_dim, value_dim = a.value_head_dim;
      std::vector<int64_t> shape{kv * value_dim};
      if (weight) shape.push_back(h);
      slots.push_back({{layer_name(family, i, suffix), std::move(shape)}, i,
                       [i, member, kv, head_dim, value_dim](ModelWeights& w, const at::Tensor& t) {
                         const int64_t columns = t.dim() == 1 ? 1 : t.size(1);
                         const at::Tensor padded = at::constant_pad_nd(t.reshape({kv, value_dim, columns}),
                                                                       {0, 0, 0, head_dim - value_dim});
                         member(w.layers[i]) = t.dim() == 1 ? padded.reshape({-1}) : padded.reshape({-1, columns});
                       }});
    };
    // Parts fused by head (rows: head 0's part 0, part 1, ..., then head 1's, ...): q, k and v (gpt_neox), or q and
    // its output gate (Qwen 3.5's q_proj); as weights [rows, h] or biases [rows].
    auto add_by_head = [&](const std::string& suffix, std::vector<int64_t> shape, std::vector<LayerTensor> parts) {
      const int64_t heads = a.heads, head_dim = a.head_dim;
      slots.push_back({{layer_name(family, i, suffix), std::move(shape)}, i,
                       [i, parts, heads, head_dim](ModelWeights& w, const at::Tensor& t) {
                         const auto count = static_cast<int64_t>(parts.size());
                         const at::Tensor by_head = t.reshape({heads, count, head_dim, -1});
                         for (int64_t k = 0; k < count; ++k) {
                           at::Tensor part = by_head.select(1, k).reshape({heads * head_dim, -1});
                           parts[k](w.layers[i]) = t.dim() == 1 ? part.reshape({-1}) : part;
                         }
                       }});
    };
    // A shared expert's weight (or, with `bias`, its bias) of projection `part`.
    auto add_shared_expert = [&](const std::string& name, std::vector<int64_t> shape, Linear ExpertWeights::*part,
                                 bool bias = false) {
      slots.push_back({{layer_name(family, i, name), std::move(shape)}, i, [i, part, bias](ModelWeights& w, const at::Tensor& t) {
                         Linear& l = w.layers[i].shared_expert.*part;
                         (bias ? l.bias : l.weight) = t;
                       }});
    };
    auto add_expert = [&](const std::string& name, std::vector<int64_t> shape, int64_t e, at::Tensor StackedExperts::*part) {
      slots.push_back({{layer_name(family, i, name), std::move(shape)}, i, nullptr,
                       [i, e, part](ModelWeights& w) { return (w.layers[i].experts.*part).select(0, e); }});
    };
    const bool biased_norms = spec.norm.layer_norm && spec.norm.bias;
    if (layer.input_norm) add(input_norm + "weight", {h}, &LayerWeights::input_norm);
    if (layer.input_norm && biased_norms) add(input_norm + "bias", {h}, &LayerWeights::input_norm_bias);
    if (layer.attn_out_norm) {  // the post-attention norm (post_norm's name) is on the attention's output there
      const std::string mixer_out = family.mixer_out_norm != nullptr ? std::string(family.mixer_out_norm) + "." : post_norm;
      add(mixer_out + "weight", {h}, &LayerWeights::attn_out_norm);
      if (layer.pre_mlp_norm)
        add(std::string(family.sandwich_pre_mlp_norm) + ".weight", {h}, &LayerWeights::post_norm);
    } else if (layer.pre_mlp_norm) {
      add(post_norm + "weight", {h}, &LayerWeights::post_norm);
      if (biased_norms) add(post_norm + "bias", {h}, &LayerWeights::post_norm_bias);
    }
    if (layer.mlp_out_norm) add(std::string(family.sandwich_mlp_out_norm) + ".weight", {h}, &LayerWeights::mlp_out_norm);
    const bool moe = m.kind == MlpKind::kExperts, gated = m.kind == MlpKind::kGated;
    const bool own_kv = a.kv_layer == i;  // a layer that reads another's keys and values has no k and v of its own
    const bool attends = layer.mixer == MixerKind::kAttention;  // else a recurrent mixer: no q, k, v, o of attention
    const bool gate_in_q = a.output_gate && family.output_gate_proj == nullptr;  // Qwen 3.5's gate rows in q_proj
    if (!own_kv && (family.qkv_by_head != nullptr || family.fused_qkv != nullptr))
      throw std::invalid_argument(fmt::format("{}: layer {} shares keys and values, which its fused q, k, v cannot",
                                              c.model_type, i));
    if (family.qkv_by_head != nullptr) {
      const std::string fused = attn + family.qkv_by_head;
      add_by_head(fused + ".weight", {3 * q_out, h}, {weight_of(&LayerWeights::q), weight_of(&LayerWeights::k), weight_of(&LayerWeights::v)});
      if (a.qkv_bias)
        add_by_head(fused + ".bias", {3 * q_out}, {bias_of(&LayerWeights::q), bias_of(&LayerWeights::k), bias_of(&LayerWeights::v)});
      if (!moe) add(mlp_module + family.mlp_up + ".weight", {ff, h}, weight_of(&LayerWeights::up));
    } else if (family.fused_qkv != nullptr) {  // rows: q, then k, then v; gate, then up
      const std::string fused = attn + family.fused_qkv;
      add_split(fused + ".weight", {q_out + 2 * kv_out, h},
                {{weight_of(&LayerWeights::q), q_out}, {weight_of(&LayerWeights::k), kv_out}, {weight_of(&LayerWeights::v), kv_out}});
      if (a.qkv_bias)
        add_split(fused + ".bias", {q_out + 2 * kv_out},
                  {{bias_of(&LayerWeights::q), q_out}, {bias_of(&LayerWeights::k), kv_out}, {bias_of(&LayerWeights::v), kv_out}});
      if (gated && c.fused_projections)
        add_split("mlp.gate_up_proj.weight", {2 * ff, h}, {{weight_of(&LayerWeights::gate), ff}, {weight_of(&LayerWeights::up), ff}});
      else if (!moe)
        add(mlp_module + family.mlp_up + ".weight", {ff, h}, weight_of(&LayerWeights::up));
    } else {
      if (layer.mixer == MixerKind::kShortConv) {
        add_short_conv(slots, layer.short_conv, h, i, layer_name(family, i, "conv."));
      } else if (layer.mixer == MixerKind::kMamba2) {
        add_mamba2(slots, layer.mamba, h, i, layer_name(family, i, std::string(family.mamba_module) + "."));
      } else if (layer.mixer == MixerKind::kGatedDeltaNet) {
        add_gated_deltanet(slots, layer.delta, h, i, layer_name(family, i, "linear_attn."), family.deltanet);
      } else if (layer.mixer == MixerKind::kLatentAttention) {
        add_latent_attention(slots, layer.latent, a, h, i, layer_name(family, i, attn), c.interleaved_rope);
      } else if (attends) {
        if (gate_in_q)  // rows per head: its q's, then its gate's
          add_by_head(attn + "q_proj.weight", {2 * q_out, h}, {weight_of(&LayerWeights::q), weight_of(&LayerWeights::attn_gate)});
        else
          add_q_or_k(attn + "q_proj.weight", {q_out, h}, weight_of(&LayerWeights::q));
        if (own_kv) {
          add_q_or_k(attn + "k_proj.weight", {kv_out, h}, weight_of(&LayerWeights::k));
          if (!a.keys_as_values) add_values(attn + "v_proj.weight", true);
        }
      }
      if (gated && family.gate_up_proj != nullptr) {
        add_split(mlp_module + family.gate_up_proj + ".weight", {2 * ff, h}, {{weight_of(&LayerWeights::gate), ff}, {weight_of(&LayerWeights::up), ff}});
      } else if (gated) {
        add(mlp_module + family.gate_proj + ".weight", {ff, h}, weight_of(&LayerWeights::gate));
        add(mlp_module + family.up_proj + ".weight", {ff, h}, weight_of(&LayerWeights::up));
      } else if (m.kind == MlpKind::kUngated) {
        add(mlp_module + family.mlp_up + ".weight", {ff, h}, weight_of(&LayerWeights::up));
      }
    }
    if (attends && a.value_head_dim == a.head_dim) {
      add(attn + family.o_proj + ".weight", {h, q_out}, weight_of(&LayerWeights::o));
    } else if (attends) {  // columns of value heads narrower than head_dim, each zero-padded to it
      const int64_t heads = a.heads, head_dim = a.head_dim, value_dim = a.value_head_dim;
      slots.push_back({{layer_name(family, i, attn + family.o_proj + ".weight"), {h, heads * value_dim}}, i,
                       [i, heads, head_dim, value_dim](ModelWeights& w, const at::Tensor& t) {
                         w.layers[i].o.weight = at::constant_pad_nd(t.reshape({t.size(0), heads, value_dim}),
                                                                    {0, head_dim - value_dim})
                                                    .reshape({t.size(0), heads * head_dim});
                       }});
    }
    if (attends && a.qkv_bias && family.qkv_by_head == nullptr && family.fused_qkv == nullptr) {
      if (gate_in_q)
        add_by_head(attn + "q_proj.bias", {2 * q_out}, {bias_of(&LayerWeights::q), bias_of(&LayerWeights::attn_gate)});
      else
        add_q_or_k(attn + "q_proj.bias", {q_out}, bias_of(&LayerWeights::q));
      if (own_kv) {
        add_q_or_k(attn + "k_proj.bias", {kv_out}, bias_of(&LayerWeights::k));
        if (!a.keys_as_values) add_values(attn + "v_proj.bias", false);
      }
    }
    if (a.o_bias && attends) add(attn + family.o_proj + ".bias", {h}, bias_of(&LayerWeights::o));
    if (a.sinks) add(attn + family.sinks_name, {a.heads}, &LayerWeights::sinks);
    if (a.output_gate && attends && !gate_in_q)
      add(attn + family.output_gate_proj + ".weight", {q_out, h}, weight_of(&LayerWeights::attn_gate));
    if (a.head_gate && attends) {
      const std::string gate = family.output_gate_proj != nullptr ? family.output_gate_proj : "gate_proj";
      add(attn + gate + ".weight", {a.heads, h}, weight_of(&LayerWeights::head_gate));
    }
    if (layer.mamba_beside)
      add_mamba2(slots, layer.mamba, h, i, layer_name(family, i, std::string(family.mamba_module) + "."));
    if (a.qk_norm != QkNorm::kNone && attends) {  // over each head (one weight, or a weight a head), or the whole width
      const bool per_head = a.qk_norm == QkNorm::kPerHead, each = a.qk_norm_weight_per_head;
      auto shape = [&](int64_t heads) -> std::vector<int64_t> {
        if (!per_head) return {heads * a.head_dim};
        return each ? std::vector<int64_t>{heads, a.head_dim} : std::vector<int64_t>{a.head_dim};
      };
      add_q_or_k(attn + family.q_norm + ".weight", shape(a.heads), &LayerWeights::q_norm, /*norm_weight=*/true);
      if (own_kv) add_q_or_k(attn + family.k_norm + ".weight", shape(a.kv_heads), &LayerWeights::k_norm, true);
    }
    if (layer.per_layer_input) {
      const int64_t p = spec.per_layer_input_size;
      add("per_layer_input_gate.weight", {p, h}, weight_of(&LayerWeights::per_layer_gate));
      add("per_layer_projection.weight", {h, p}, weight_of(&LayerWeights::per_layer_projection));
      add("post_per_layer_input_norm.weight", {h}, &LayerWeights::per_layer_norm);
    }
    if (layer.scalar) add("layer_scalar", {1}, &LayerWeights::scalar);
    if (layer.experts_beside) add_experts_beside(slots, layer.experts, h, i, layer_name(family, i, ""));
    if (m.activation == Activation::kXielu) {
      add("mlp.act_fn.alpha_p", {1}, &LayerWeights::xielu_alpha_p);
      add("mlp.act_fn.alpha_n", {1}, &LayerWeights::xielu_alpha_n);
      add("mlp.act_fn.beta", {}, &LayerWeights::xielu_beta);
      add("mlp.act_fn.eps", {}, &LayerWeights::xielu_eps);
    }
    if (m.kind == MlpKind::kUngated) {
      add(mlp_module + family.mlp_down + ".weight", {h, ff}, weight_of(&LayerWeights::down));
      if (m.bias) {
        add(mlp_module + family.mlp_up + ".bias", {ff}, bias_of(&LayerWeights::up));
        add(mlp_module + family.mlp_down + ".bias", {h}, bias_of(&LayerWeights::down));
      }
      continue;
    }
    if (gated) {
      add(mlp_module + family.down_proj + ".weight", {h, ff}, weight_of(&LayerWeights::down));
      if (m.bias) {
        add(mlp_module + family.gate_proj + ".bias", {ff}, bias_of(&LayerWeights::gate));
        add(mlp_module + family.up_proj + ".bias", {ff}, bias_of(&LayerWeights::up));
        add(mlp_module + family.down_proj + ".bias", {h}, bias_of(&LayerWeights::down));
      }
      continue;
    }
    if (m.kind == MlpKind::kNone) continue;
    const ExpertTraits& names = family.experts;
    const int64_t sff = m.router.shared_expert_size;
    if (names.stacked) {
      add_stacked_experts(slots, m, names, h, i, layer_name(family, i, ""));
      continue;
    }
    add(names.router, {m.router.experts, h}, weight_of(&LayerWeights::router));
    slots.back().fp32 = names.router_fp32;
    if (names.correction_bias != nullptr && m.router.correction_bias) {
      std::vector<int64_t> shape{m.router.experts};
      if (names.correction_bias_row) shape.insert(shape.begin(), 1);
      slots.push_back({{layer_name(family, i, names.correction_bias), shape}, i,
                       [i](ModelWeights& w, const at::Tensor& t) { w.layers[i].correction_bias = t.reshape({-1}); },
                       nullptr, names.router_fp32 || names.correction_bias_fp32});
    }
    if (names.gate_up_rows)
      add_row_stacked_experts(slots, i, layer_name(family, i, names.gate), layer_name(family, i, names.down),
                              m.router.experts, ff, h);
    const int64_t in = m.latent_size > 0 ? m.latent_size : h;  // the experts' width
    if (m.latent_size > 0) {
      add(std::string(names.latent_in) + ".weight", {in, h}, weight_of(&LayerWeights::latent_in));
      add(std::string(names.latent_out) + ".weight", {h, in}, weight_of(&LayerWeights::latent_out));
      if (c.mlp_bias) {
        add(std::string(names.latent_in) + ".bias", {in}, bias_of(&LayerWeights::latent_in));
        add(std::string(names.latent_out) + ".bias", {h}, bias_of(&LayerWeights::latent_out));
      }
    }
    for (int64_t e = 0; e < m.router.experts && !names.gate_up_rows; ++e) {
      if (!m.ungated_experts) add_expert(fmt::format(fmt::runtime(names.gate), e), {ff, in}, e, &StackedExperts::gate);
      add_expert(fmt::format(fmt::runtime(names.up), e), {ff, in}, e, &StackedExperts::up);
      add_expert(fmt::format(fmt::runtime(names.down), e), {in, ff}, e, &StackedExperts::down);
    }
    if (sff > 0) {
      const std::string shared = std::string(names.shared) + ".";
      if (family.gate_up_proj != nullptr) {
        slots.push_back({{layer_name(family, i, shared + family.gate_up_proj + ".weight"), {2 * sff, h}}, i,
                         [i, sff](ModelWeights& w, const at::Tensor& t) {
                           w.layers[i].shared_expert.gate.weight = t.narrow(0, 0, sff);
                           w.layers[i].shared_expert.up.weight = t.narrow(0, sff, sff);
                         }});
      } else {
        if (!m.ungated_experts) add_shared_expert(shared + family.gate_proj + ".weight", {sff, h}, &ExpertWeights::gate);
        add_shared_expert(shared + family.up_proj + ".weight", {sff, h}, &ExpertWeights::up);
      }
      add_shared_expert(shared + family.down_proj + ".weight", {h, sff}, &ExpertWeights::down);
      if (c.mlp_bias) {  // as the dense MLP's (ernie4_5_moe's use_bias)
        if (!m.ungated_experts) add_shared_expert(shared + "gate_proj.bias", {sff}, &ExpertWeights::gate, true);
        add_shared_expert(shared + "up_proj.bias", {sff}, &ExpertWeights::up, true);
        add_shared_expert(shared + "down_proj.bias", {h}, &ExpertWeights::down, true);
      }
      if (m.router.shared_expert_gated) add(std::string(names.shared) + "_gate.weight", {1, h}, weight_of(&LayerWeights::shared_expert_gate));
    }
  }
  if (spec.per_layer_input_size > 0) {
    const int64_t width = c.num_layers * spec.per_layer_input_size;
    const std::string base = std::string(family.embed).substr(0, std::string(family.embed).find('.') + 1);
    slots.push_back({{base + "embed_tokens_per_layer.weight", {c.per_layer_vocab, width}}, -1,
                     [](ModelWeights& w, const at::Tensor& t) { w.per_layer_embed = t; }});
    slots.push_back({{base + "per_layer_model_projection.weight", {width, h}}, -1,
                     [](ModelWeights& w, const at::Tensor& t) { w.per_layer_model_projection.weight = t; }});
    slots.push_back({{base + "per_layer_projection_norm.weight", {spec.per_layer_input_size}}, -1,
                     [](ModelWeights& w, const at::Tensor& t) { w.per_layer_projection_norm = t; }});
  }
  const std::string final_norm = family.final_norm;
  slots.push_back({{final_norm + ".weight", {h}}, c.num_layers,
                   [](ModelWeights& w, const at::Tensor& t) { w.final_norm = t; }});
  if (spec.norm.layer_norm && spec.norm.bias)
    slots.push_back({{final_norm + ".bias", {h}}, c.num_layers,
                     [](ModelWeights& w, const at::Tensor& t) { w.final_norm_bias = t; }});
  if (!c.tie_word_embeddings)
    slots.push_back({{output_layer_names(c).weight, {c.output_vocab(), h}}, c.num_layers,
                     [](ModelWeights& w, const at::Tensor& t) { w.lm_head.weight = t; }});
  if (c.lm_head_bias)
    slots.push_back({{output_layer_names(c).bias, {c.output_vocab()}}, c.num_layers,
                     [](ModelWeights& w, const at::Tensor& t) { w.lm_head.bias = t; }});
  return slots;
}

}  // namespace

OutputLayerNames output_layer_names(const ModelConfig& config) {
  const std::string lm_head = model_family(config.model_type).lm_head;
  return {lm_head + ".weight", lm_head + ".bias"};
}

std::vector<TensorSpec> expected_tensors(const ModelConfig& config) {
  std::vector<TensorSpec> specs;
  for (const WeightSlot& slot : checkpoint_layout(config)) specs.push_back(slot.spec);
  return specs;
}

WeightBytes weight_bytes(const ModelConfig& config, at::ScalarType dtype) {
  WeightBytes bytes;
  bytes.layers.assign(config.num_layers, 0);
  const std::vector<WeightSlot> layout = checkpoint_layout(config);
  for (const WeightSlot& slot : layout) {
    int64_t size = c10::elementSize(slot_dtype(slot, dtype));
    for (const int64_t extent : slot.spec.shape) size *= extent;
    if (slot.layer < 0) {
      bytes.first += size;
      if (config.tie_word_embeddings && &slot == &layout.front()) bytes.last += size;  // the embeddings' copy
    } else {
      (slot.layer < config.num_layers ? bytes.layers[slot.layer] : bytes.last) += size;
    }
  }
  return bytes;
}

ModelWeights assemble_weights(const ModelConfig& config, const TensorSource& source,
                              const std::vector<c10::Device>& layer_devices, at::ScalarType dtype) {
  if (static_cast<int64_t>(layer_devices.size()) != config.num_layers)
    throw std::invalid_argument(fmt::format("{} layer devices for {} layers", layer_devices.size(), config.num_layers));
  ModelWeights w;
  w.layers.resize(config.num_layers);
  const ModelSpec spec = model_spec(config);
  for (int64_t i = 0; i < config.num_layers; ++i) {
    w.layers[i].device = layer_devices[i];
    const MlpSpec& m = spec.layers[i].mlp;
    const ExpertTraits& names = model_family(config.model_type).experts;
    if (m.kind == MlpKind::kExperts && !names.stacked && !names.gate_up_rows) {  // filled expert by expert
      const auto options = at::TensorOptions().device(layer_devices[i]).dtype(dtype);
      const int64_t e = m.router.experts, ff = m.size, in = m.latent_size > 0 ? m.latent_size : config.hidden_size;
      w.layers[i].experts = {m.ungated_experts ? at::Tensor() : at::empty({e, ff, in}, options),
                             at::empty({e, ff, in}, options), at::empty({e, in, ff}, options)};
    }
  }
  for (const WeightSlot& slot : checkpoint_layout(config)) {
    const c10::Device device = layer_devices[std::clamp<int64_t>(slot.layer, 0, config.num_layers - 1)];
    // Always a copy: a checkpoint's tensor is a view of its file, copied once to its device and dtype.
    if (slot.into)
      slot.into(w).copy_(source(slot.spec, device));
    else
      slot.place(w, source(slot.spec, device).to(device, slot_dtype(slot, dtype), /*non_blocking=*/false, /*copy=*/true));
  }
  if (config.tie_word_embeddings) w.lm_head.weight = w.embed.to(layer_devices.back());
  for (int64_t i = 0; i < config.num_layers; ++i) {
    stack_projections(w.layers[i], spec.layers[i].attention);
    multiplier_rows(w.layers[i], spec.layers[i]);
  }
  return w;
}

}  // namespace prefix_scorer
