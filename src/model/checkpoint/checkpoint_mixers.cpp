// The mixers' checkpoint tensors: latent attention, Gated DeltaNet, short convolution and Mamba2 (see
// checkpoint_layout.h).

#include "model/checkpoint/checkpoint_layout.h"

#include <utility>

namespace prefix_scorer {

void add_latent_attention(std::vector<WeightSlot>& slots, const LatentSpec& m, const AttentionSpec& a, int64_t h,
                          int64_t i, const std::string& prefix, bool interleaved, const std::string& o_proj) {
  auto add = [&](const std::string& name, std::vector<int64_t> shape, auto member) {
    add_layer_tensor(slots, i, prefix + name, std::move(shape), member);
  };
  // rows of `block` whose last rope_dim rows are rotated, as stored or reordered
  auto add_rotated = [&](const std::string& name, std::vector<int64_t> shape, int64_t block, auto member) {
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
  add(o_proj + ".weight", {h, heads * m.value_dim}, weight_of(&LayerWeights::o));
  if (a.o_bias) add(o_proj + ".bias", {h}, bias_of(&LayerWeights::o));
  if (a.head_gate) add("g_proj.weight", {heads, h}, weight_of(&LayerWeights::head_gate));
}

void add_gated_deltanet(std::vector<WeightSlot>& slots, const DeltaNetSpec& d, int64_t h, int64_t i,
                        const std::string& prefix, const ModelFamily& family) {
  const DeltaNetLayout layout = family.deltanet;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, auto member) {
    add_layer_tensor(slots, i, prefix + name, std::move(shape), member);
  };
  const int64_t groups = d.key_heads, per_group = d.value_heads / d.key_heads;
  const bool ling = layout == DeltaNetLayout::kLing, kda = layout == DeltaNetLayout::kKimi || ling;
  const bool separate = layout == DeltaNetLayout::kSeparateQkv || kda;
  if (separate)  // q, k and v apart, written into the convolution's channels in that order
    add_joined_rows(slots, i, prefix,
                    {{"q_proj.weight", d.key_width()}, {"k_proj.weight", d.key_width()}, {"v_proj.weight", d.value_width()}},
                    {h}, weight_of(&LayerWeights::delta_qkv));
  switch (layout) {
    case DeltaNetLayout::kSeparateQkv:
      add("g_proj.weight", {d.value_width(), h}, weight_of(&LayerWeights::delta_z));
      add("b_proj.weight", {d.value_heads, h}, weight_of(&LayerWeights::delta_b));
      add("a_proj.weight", {d.value_heads, h}, weight_of(&LayerWeights::delta_a));
      break;
    case DeltaNetLayout::kKimi:  // the decay's and the gate's low-rank pairs, through one head's width
      add("f_a_proj.weight", {d.key_dim, h}, weight_of(&LayerWeights::delta_a));
      add("f_b_proj.weight", {d.key_width(), d.key_dim}, weight_of(&LayerWeights::delta_a_up));
      add("g_a_proj.weight", {d.value_dim, h}, weight_of(&LayerWeights::delta_z));
      add("g_b_proj.weight", {d.value_width(), d.value_dim}, weight_of(&LayerWeights::delta_z_up));
      add("b_proj.weight", {d.value_heads, h}, weight_of(&LayerWeights::delta_b));
      break;
    case DeltaNetLayout::kLing:
      add("f_proj.weight", {d.key_width(), h}, weight_of(&LayerWeights::delta_a));
      add("g_proj.weight", {d.value_width(), h}, weight_of(&LayerWeights::delta_z));
      add("b_proj.weight", {d.value_heads, h}, weight_of(&LayerWeights::delta_b));
      break;
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
  if (separate) {  // q's, k's and v's convolutions apart, joined in that order
    add_joined_rows(slots, i, prefix,
                    {{"q_conv1d.weight", d.key_width()}, {"k_conv1d.weight", d.key_width()}, {"v_conv1d.weight", d.value_width()}},
                    {1, d.taps}, &LayerWeights::delta_conv);
    for (size_t k = slots.size() - 3; k < slots.size(); ++k) slots[k].fp32 = ling;  // Ling 3 convolves in fp32
  } else {
    add_depthwise_conv(slots, i, prefix + "conv1d.weight", d.conv_channels(), d.taps, &LayerWeights::delta_conv);
  }
  add("dt_bias", {kda ? d.key_width() : d.value_heads}, &LayerWeights::delta_dt_bias);
  slots.back().fp32 = kda;  // as transformers keeps KDA's
  if (layout == DeltaNetLayout::kKimi)  // [1, 1, heads, 1] as saved
    slots.push_back({{prefix + "A_log", {1, 1, d.value_heads, 1}}, i,
                     [=](ModelWeights& w, const at::Tensor& t) { w.layers[i].delta_a_log = t.reshape({d.value_heads}); }});
  else
    add("A_log", {d.value_heads}, &LayerWeights::delta_a_log);
  slots.back().fp32 = ling;
  add(separate ? "o_norm.weight" : "norm.weight", {d.value_dim}, &LayerWeights::delta_norm);
  add(separate ? std::string(family.o_proj) + ".weight" : "out_proj.weight", {h, d.value_width()}, weight_of(&LayerWeights::o));
}

void add_short_conv(std::vector<WeightSlot>& slots, const ShortConvSpec& s, int64_t h, int64_t i,
                    const std::string& prefix) {
  auto add = [&](const std::string& name, std::vector<int64_t> shape, auto member) {
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

void add_mamba2(std::vector<WeightSlot>& slots, const Mamba2Spec& m, int64_t h, int64_t i, const std::string& prefix) {
  auto add = [&](const std::string& name, std::vector<int64_t> shape, auto member) {
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

}  // namespace prefix_scorer
