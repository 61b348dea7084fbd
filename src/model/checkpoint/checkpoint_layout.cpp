#include "model/checkpoint/checkpoint_layout.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace prefix_scorer {

ProjectionWeight weight_of(Linear LayerWeights::*member) { return {member}; }

LayerTensor bias_of(Linear LayerWeights::*member) {
  return [member](LayerWeights& l) -> at::Tensor& { return (l.*member).bias; };
}

std::string layer_name(const ModelFamily& family, int64_t layer, const std::string& suffix) {
  return fmt::format("{}.{}.{}", family.layers, layer, suffix);
}

void add_layer_tensor(std::vector<WeightSlot>& slots, int64_t i, const std::string& name, std::vector<int64_t> shape,
                      LayerTensor member) {
  slots.push_back({{name, std::move(shape)}, i,
                   [i, member](ModelWeights& w, const at::Tensor& t) { member(w.layers[i]) = t; }});
}

void add_layer_tensor(std::vector<WeightSlot>& slots, int64_t i, const std::string& name, std::vector<int64_t> shape,
                      ProjectionWeight weight) {
  add_layer_tensor(slots, i, name, std::move(shape), LayerTensor(weight));
  slots.back().projection = weight.member;
}

void add_depthwise_conv(std::vector<WeightSlot>& slots, int64_t i, const std::string& name, int64_t channels,
                        int64_t taps, LayerTensor member) {
  slots.push_back({{name, {channels, 1, taps}}, i,
                   [i, member](ModelWeights& w, const at::Tensor& t) { member(w.layers[i]) = t.squeeze(1); }});
}

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

namespace {

// q or k rows (weights [rows, in] or biases [rows]) of heads whose rope rotates interleaved pairs, reordered per head
// to the two halves the rope here rotates: row 2j to j, row 2j + 1 to d/2 + j.
at::Tensor halves_from_pairs(const at::Tensor& t, int64_t head_dim) {
  return t.reshape({-1, head_dim / 2, 2, t.dim() == 1 ? 1 : t.size(1)}).transpose(1, 2).reshape(t.sizes());
}

}  // namespace

at::Tensor rope_rows_to_halves(const at::Tensor& t, int64_t block, int64_t offset, int64_t rope) {
  const int64_t columns = t.dim() == 1 ? 1 : t.size(1);
  at::Tensor blocks = t.reshape({-1, block, columns}).clone();
  const at::Tensor part = blocks.narrow(1, offset, rope);
  part.copy_(halves_from_pairs(part.reshape({-1, columns}), rope).view(part.sizes()));
  return blocks.reshape(t.sizes());
}

void LayerLayout::add_split(const std::string& suffix, std::vector<int64_t> shape,
                            std::vector<std::pair<LayerTensor, int64_t>> parts) {
  const bool in_out = family.conv1d_weights && shape.size() == 2;
  if (in_out) std::swap(shape[0], shape[1]);
  slots.push_back({{name(suffix), std::move(shape), in_out}, i,
                   [i = i, parts, in_out](ModelWeights& w, const at::Tensor& stored) {
                     const at::Tensor t = in_out ? stored.t().contiguous() : stored;
                     int64_t row = 0;
                     for (const auto& [member, rows] : parts) {
                       member(w.layers[i]) = parts.size() == 1 ? t : t.narrow(0, row, rows);
                       row += rows;
                     }
                   }});
}

void LayerLayout::add(const std::string& suffix, std::vector<int64_t> shape, LayerTensor member) {
  add_split(suffix, std::move(shape), {{std::move(member), 0}});
}

void LayerLayout::add(const std::string& suffix, std::vector<int64_t> shape, ProjectionWeight weight) {
  add(suffix, std::move(shape), LayerTensor(weight));
  if (!slots.back().spec.stored_in_out) slots.back().projection = weight.member;  // Conv1D's, transposed: plain
}

namespace {

// q or k, whose rotated rows (each head's first rotary_dim) a rope of interleaved pairs reorders; with
// `norm_weight`, q's or k's norm weight, whose values follow those rows (taken flat, a head_dim a head). A weight
// whose rows stay in place is a projection's (it may stay in the checkpoint's form).
template <typename Member>
void add_q_or_k(LayerLayout& l, const std::string& suffix, std::vector<int64_t> shape, Member member_of,
                bool norm_weight = false) {
  if (!l.c.interleaved_rope) return l.add(suffix, std::move(shape), member_of);
  const LayerTensor member(member_of);
  const AttentionSpec& a = l.layer.attention;
  const int64_t i = l.i, head_dim = a.head_dim;
  const int64_t rotated = a.rope < 0 ? 0 : l.spec.ropes[a.rope].rope.rotary_dim(head_dim);
  l.slots.push_back({{l.name(suffix), std::move(shape)}, i,
                     [i, member, head_dim, rotated, norm_weight](ModelWeights& w, const at::Tensor& t) {
                       const at::Tensor rows = norm_weight ? t.reshape({-1}) : t;
                       member(w.layers[i]) =
                           rotated == 0 ? t : rope_rows_to_halves(rows, head_dim, 0, rotated).view(t.sizes());
                     }});
}

// v's weight (or bias): rows of value heads that may be narrower than head_dim, each zero-padded to it.
void add_values(LayerLayout& l, const std::string& suffix, bool weight) {
  const AttentionSpec& a = l.layer.attention;
  const LayerTensor member = weight ? weight_of(&LayerWeights::v) : bias_of(&LayerWeights::v);
  if (a.value_head_dim == a.head_dim) {
    const int64_t kv_out = a.kv_width();
    if (weight) return l.add(suffix, {kv_out, l.h}, weight_of(&LayerWeights::v));
    return l.add(suffix, {kv_out}, member);
  }
  const int64_t i = l.i, kv = a.kv_heads, head_dim = a.head_dim, value_dim = a.value_head_dim;
  std::vector<int64_t> shape{kv * value_dim};
  if (weight) shape.push_back(l.h);
  l.slots.push_back({{l.name(suffix), std::move(shape)}, i,
                     [i, member, kv, head_dim, value_dim](ModelWeights& w, const at::Tensor& t) {
                       const int64_t columns = t.dim() == 1 ? 1 : t.size(1);
                       const at::Tensor padded = at::constant_pad_nd(t.reshape({kv, value_dim, columns}),
                                                                     {0, 0, 0, head_dim - value_dim});
                       member(w.layers[i]) = t.dim() == 1 ? padded.reshape({-1}) : padded.reshape({-1, columns});
                     }});
}

// Parts fused by head (rows: head 0's part 0, part 1, ..., then head 1's, ...): q, k and v (gpt_neox), or q and
// its output gate (Qwen 3.5's q_proj); as weights [rows, h] or biases [rows].
void add_by_head(LayerLayout& l, const std::string& suffix, std::vector<int64_t> shape, std::vector<LayerTensor> parts) {
  const int64_t i = l.i, heads = l.layer.attention.heads, head_dim = l.layer.attention.head_dim;
  l.slots.push_back({{l.name(suffix), std::move(shape)}, i,
                     [i, parts, heads, head_dim](ModelWeights& w, const at::Tensor& t) {
                       const auto count = static_cast<int64_t>(parts.size());
                       const at::Tensor by_head = t.reshape({heads, count, head_dim, -1});
                       for (int64_t k = 0; k < count; ++k) {
                         at::Tensor part = by_head.select(1, k).reshape({heads * head_dim, -1});
                         parts[k](w.layers[i]) = t.dim() == 1 ? part.reshape({-1}) : part;
                       }
                     }});
}

// The layer's norms: before the mixer, after it (on its output where the MLP has its own before it), after the MLP.
void add_layer_norms(LayerLayout& l) {
  const LayerSpec& layer = l.layer;
  const int64_t h = l.h;
  const std::string input_norm = std::string(l.family.input_norm) + ".", post_norm = std::string(l.family.post_norm) + ".";
  const bool biased_norms = l.spec.norm.layer_norm && l.spec.norm.bias;
  if (layer.input_norm) l.add(input_norm + "weight", {h}, &LayerWeights::input_norm);
  if (layer.input_norm && biased_norms) l.add(input_norm + "bias", {h}, &LayerWeights::input_norm_bias);
  if (layer.attn_out_norm) {  // the post-attention norm (post_norm's name) is on the attention's output there
    const std::string mixer_out = l.family.mixer_out_norm != nullptr ? std::string(l.family.mixer_out_norm) + "." : post_norm;
    l.add(mixer_out + "weight", {h}, &LayerWeights::attn_out_norm);
    if (layer.pre_mlp_norm) l.add(std::string(l.family.sandwich_pre_mlp_norm) + ".weight", {h}, &LayerWeights::post_norm);
  } else if (layer.pre_mlp_norm) {
    l.add(post_norm + "weight", {h}, &LayerWeights::post_norm);
    if (biased_norms) l.add(post_norm + "bias", {h}, &LayerWeights::post_norm_bias);
  }
  if (layer.mlp_out_norm) l.add(std::string(l.family.sandwich_mlp_out_norm) + ".weight", {h}, &LayerWeights::mlp_out_norm);
}

// Whether q's rows hold each head's output gate after its queries (Qwen 3.5's q_proj).
bool gate_in_q(const LayerLayout& l) {
  return l.layer.attention.output_gate && l.family.output_gate_proj == nullptr;
}

// q, k and v fused (by head, or q then k then v) with the MLP's up (and gate) projection after them.
void add_fused_qkv_and_mlp_inputs(LayerLayout& l) {
  const ModelFamily& family = l.family;
  const AttentionSpec& a = l.layer.attention;
  const MlpSpec& m = l.layer.mlp;
  const std::string attn = std::string(family.attn) + ".", mlp_module = std::string(family.mlp_module) + ".";
  const int64_t h = l.h, q_out = a.q_width(), kv_out = a.kv_width(), ff = m.size;
  const bool moe = m.kind == MlpKind::kExperts;
  if (a.kv_layer != l.i)
    throw std::invalid_argument(fmt::format("{}: layer {} shares keys and values, which its fused q, k, v cannot",
                                            l.c.model_type, l.i));
  if (family.qkv_by_head != nullptr) {
    const std::string fused = attn + family.qkv_by_head;
    add_by_head(l, fused + ".weight", {3 * q_out, h},
                {weight_of(&LayerWeights::q), weight_of(&LayerWeights::k), weight_of(&LayerWeights::v)});
    if (a.qkv_bias)
      add_by_head(l, fused + ".bias", {3 * q_out},
                  {bias_of(&LayerWeights::q), bias_of(&LayerWeights::k), bias_of(&LayerWeights::v)});
    if (!moe) l.add(mlp_module + family.mlp_up + ".weight", {ff, h}, weight_of(&LayerWeights::up));
    return;
  }
  const std::string fused = attn + family.fused_qkv;  // rows: q, then k, then v; gate, then up
  l.add_split(fused + ".weight", {q_out + 2 * kv_out, h},
              {{weight_of(&LayerWeights::q), q_out}, {weight_of(&LayerWeights::k), kv_out}, {weight_of(&LayerWeights::v), kv_out}});
  if (a.qkv_bias)
    l.add_split(fused + ".bias", {q_out + 2 * kv_out},
                {{bias_of(&LayerWeights::q), q_out}, {bias_of(&LayerWeights::k), kv_out}, {bias_of(&LayerWeights::v), kv_out}});
  if (m.kind == MlpKind::kGated && l.c.fused_projections)
    l.add_split("mlp.gate_up_proj.weight", {2 * ff, h}, {{weight_of(&LayerWeights::gate), ff}, {weight_of(&LayerWeights::up), ff}});
  else if (!moe)
    l.add(mlp_module + family.mlp_up + ".weight", {ff, h}, weight_of(&LayerWeights::up));
}

// The mixer's input tensors (q, k and v apart; or a recurrent mixer's, or latent attention's), then the dense MLP's
// gate and up.
void add_mixer_and_mlp_inputs(LayerLayout& l) {
  const ModelFamily& family = l.family;
  const LayerSpec& layer = l.layer;
  const AttentionSpec& a = layer.attention;
  const MlpSpec& m = layer.mlp;
  const std::string attn = std::string(family.attn) + ".", mlp_module = std::string(family.mlp_module) + ".";
  const int64_t h = l.h, i = l.i, q_out = a.q_width(), kv_out = a.kv_width(), ff = m.size;
  if (layer.mixer == MixerKind::kShortConv) {
    add_short_conv(l.slots, layer.short_conv, h, i, l.name("conv."));
  } else if (layer.mixer == MixerKind::kMamba2) {
    add_mamba2(l.slots, layer.mamba, h, i, l.name(std::string(family.mamba_module) + "."));
  } else if (layer.mixer == MixerKind::kGatedDeltaNet) {
    add_gated_deltanet(l.slots, layer.delta, h, i, l.name(std::string(family.deltanet_module) + "."), family);
  } else if (layer.mixer == MixerKind::kLatentAttention) {
    add_latent_attention(l.slots, layer.latent, a, h, i, l.name(attn), l.c.interleaved_rope, family.o_proj);
  } else if (layer.mixer == MixerKind::kAttention) {
    if (gate_in_q(l))  // rows per head: its q's, then its gate's
      add_by_head(l, attn + "q_proj.weight", {2 * q_out, h}, {weight_of(&LayerWeights::q), weight_of(&LayerWeights::attn_gate)});
    else
      add_q_or_k(l, attn + "q_proj.weight", {q_out, h}, weight_of(&LayerWeights::q));
    if (a.kv_layer == i) {  // a layer that reads another's keys and values has no k and v of its own
      add_q_or_k(l, attn + "k_proj.weight", {kv_out, h}, weight_of(&LayerWeights::k));
      if (!a.keys_as_values) add_values(l, attn + "v_proj.weight", true);
    }
  }
  if (m.kind == MlpKind::kGated && family.gate_up_proj != nullptr) {
    l.add_split(mlp_module + family.gate_up_proj + ".weight", {2 * ff, h},
                {{weight_of(&LayerWeights::gate), ff}, {weight_of(&LayerWeights::up), ff}});
  } else if (m.kind == MlpKind::kGated) {
    l.add(mlp_module + family.gate_proj + ".weight", {ff, h}, weight_of(&LayerWeights::gate));
    l.add(mlp_module + family.up_proj + ".weight", {ff, h}, weight_of(&LayerWeights::up));
  } else if (m.kind == MlpKind::kUngated) {
    l.add(mlp_module + family.mlp_up + ".weight", {ff, h}, weight_of(&LayerWeights::up));
  }
}

// Attention's output projection (columns of value heads narrower than head_dim each zero-padded to it), q's, k's
// and v's biases where they are apart, o's bias, the sinks and the output gates.
void add_attention_outputs(LayerLayout& l) {
  const ModelFamily& family = l.family;
  const AttentionSpec& a = l.layer.attention;
  const std::string attn = std::string(family.attn) + ".";
  const int64_t h = l.h, i = l.i, q_out = a.q_width(), kv_out = a.kv_width();
  if (a.value_head_dim == a.head_dim) {
    l.add(attn + family.o_proj + ".weight", {h, q_out}, weight_of(&LayerWeights::o));
  } else {
    const int64_t heads = a.heads, head_dim = a.head_dim, value_dim = a.value_head_dim;
    l.slots.push_back({{l.name(attn + family.o_proj + ".weight"), {h, heads * value_dim}}, i,
                       [i, heads, head_dim, value_dim](ModelWeights& w, const at::Tensor& t) {
                         w.layers[i].o.weight = at::constant_pad_nd(t.reshape({t.size(0), heads, value_dim}),
                                                                    {0, head_dim - value_dim})
                                                    .reshape({t.size(0), heads * head_dim});
                       }});
  }
  if (a.qkv_bias && family.qkv_by_head == nullptr && family.fused_qkv == nullptr) {
    if (gate_in_q(l))
      add_by_head(l, attn + "q_proj.bias", {2 * q_out}, {bias_of(&LayerWeights::q), bias_of(&LayerWeights::attn_gate)});
    else
      add_q_or_k(l, attn + "q_proj.bias", {q_out}, bias_of(&LayerWeights::q));
    if (a.kv_layer == i) {
      add_q_or_k(l, attn + "k_proj.bias", {kv_out}, bias_of(&LayerWeights::k));
      if (!a.keys_as_values) add_values(l, attn + "v_proj.bias", false);
    }
  }
  if (a.o_bias) l.add(attn + family.o_proj + ".bias", {h}, bias_of(&LayerWeights::o));
  if (a.sinks) l.add(attn + family.sinks_name, {a.heads}, &LayerWeights::sinks);
  if (a.output_gate && !gate_in_q(l))
    l.add(attn + family.output_gate_proj + ".weight", {q_out, h}, weight_of(&LayerWeights::attn_gate));
  if (a.head_gate) {
    const std::string gate = family.output_gate_proj != nullptr ? family.output_gate_proj : "gate_proj";
    l.add(attn + gate + ".weight", {a.heads, h}, weight_of(&LayerWeights::head_gate));
  }
}

// q's and k's norms: over each head (one weight, or a weight a head), or over the whole width.
void add_qk_norms(LayerLayout& l) {
  const AttentionSpec& a = l.layer.attention;
  const std::string attn = std::string(l.family.attn) + ".";
  const bool per_head = a.qk_norm == QkNorm::kPerHead, each = a.qk_norm_weight_per_head;
  auto shape = [&](int64_t heads) -> std::vector<int64_t> {
    if (!per_head) return {heads * a.head_dim};
    return each ? std::vector<int64_t>{heads, a.head_dim} : std::vector<int64_t>{a.head_dim};
  };
  add_q_or_k(l, attn + l.family.q_norm + ".weight", shape(a.heads), &LayerWeights::q_norm, /*norm_weight=*/true);
  if (a.kv_layer == l.i) add_q_or_k(l, attn + l.family.k_norm + ".weight", shape(a.kv_heads), &LayerWeights::k_norm, true);
}

// The per-layer input's gate, projection and norm; the layer's scalar; experts beside the MLP; xIELU's parameters.
void add_layer_extras(LayerLayout& l) {
  const LayerSpec& layer = l.layer;
  const int64_t h = l.h;
  if (layer.per_layer_input) {
    const int64_t p = l.spec.per_layer_input_size;
    l.add("per_layer_input_gate.weight", {p, h}, weight_of(&LayerWeights::per_layer_gate));
    l.add("per_layer_projection.weight", {h, p}, weight_of(&LayerWeights::per_layer_projection));
    l.add("post_per_layer_input_norm.weight", {h}, &LayerWeights::per_layer_norm);
  }
  if (layer.scalar) l.add("layer_scalar", {1}, &LayerWeights::scalar);
  if (layer.experts_beside) add_experts_beside(l);
  if (layer.mlp.activation == Activation::kXielu) {
    l.add("mlp.act_fn.alpha_p", {1}, &LayerWeights::xielu_alpha_p);
    l.add("mlp.act_fn.alpha_n", {1}, &LayerWeights::xielu_alpha_n);
    l.add("mlp.act_fn.beta", {}, &LayerWeights::xielu_beta);
    l.add("mlp.act_fn.eps", {}, &LayerWeights::xielu_eps);
  }
}

// The MLP's down projection and its biases, or the routed experts.
void add_mlp_outputs(LayerLayout& l) {
  const ModelFamily& family = l.family;
  const MlpSpec& m = l.layer.mlp;
  const std::string mlp_module = std::string(family.mlp_module) + ".";
  const int64_t h = l.h, ff = m.size;
  if (m.kind == MlpKind::kUngated) {
    l.add(mlp_module + family.mlp_down + ".weight", {h, ff}, weight_of(&LayerWeights::down));
    if (m.bias) {
      l.add(mlp_module + family.mlp_up + ".bias", {ff}, bias_of(&LayerWeights::up));
      l.add(mlp_module + family.mlp_down + ".bias", {h}, bias_of(&LayerWeights::down));
    }
  } else if (m.kind == MlpKind::kGated) {
    l.add(mlp_module + family.down_proj + ".weight", {h, ff}, weight_of(&LayerWeights::down));
    if (m.bias) {
      l.add(mlp_module + family.gate_proj + ".bias", {ff}, bias_of(&LayerWeights::gate));
      l.add(mlp_module + family.up_proj + ".bias", {ff}, bias_of(&LayerWeights::up));
      l.add(mlp_module + family.down_proj + ".bias", {h}, bias_of(&LayerWeights::down));
    }
  } else if (m.kind == MlpKind::kExperts) {
    add_routed_experts(l);
  }
}

// The tensors outside the layers: per-layer inputs' embeddings and projection, the final norm, the output layer.
void add_model_outputs(std::vector<WeightSlot>& slots, const ModelConfig& c, const ModelFamily& family,
                       const ModelSpec& spec) {
  const int64_t h = c.hidden_size;
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
}

}  // namespace

std::string embeddings_name(const ModelConfig& c) { return std::string(model_family(c.model_type).embed) + ".weight"; }

ModelLayout model_layout(const ModelConfig& c) {
  const int64_t h = c.hidden_size;
  const ModelFamily& family = model_family(c.model_type);
  ModelLayout layout{model_spec(c), {}};
  const ModelSpec& spec = layout.spec;
  std::vector<WeightSlot>& slots = layout.slots;
  slots.push_back({{embeddings_name(c), {c.vocab_size, h}}, -1,
                   [](ModelWeights& w, const at::Tensor& t) { w.embed = t; }});
  if (c.learned_positions)
    slots.push_back({{std::string(family.position_embed) + ".weight", {c.max_position_embeddings, h}}, -1,
                     [](ModelWeights& w, const at::Tensor& t) { w.position_embed = t; }});
  for (int64_t i = 0; i < c.num_layers; ++i) {
    LayerLayout l{slots, c, family, spec, spec.layers[i], i, h};
    const bool attends = l.layer.mixer == MixerKind::kAttention;  // else a recurrent mixer or latent attention
    add_layer_norms(l);
    if (family.qkv_by_head != nullptr || family.fused_qkv != nullptr)
      add_fused_qkv_and_mlp_inputs(l);
    else
      add_mixer_and_mlp_inputs(l);
    if (attends) add_attention_outputs(l);
    if (l.layer.mamba_beside) add_mamba2(slots, l.layer.mamba, h, i, l.name(std::string(family.mamba_module) + "."));
    if (attends && l.layer.attention.has_qk_norm_weights()) add_qk_norms(l);
    add_layer_extras(l);
    add_mlp_outputs(l);
  }
  add_model_outputs(slots, c, family, spec);
  return layout;
}

}  // namespace prefix_scorer
