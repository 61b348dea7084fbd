// Self-attention: q, k and v projected by one matmul, normed and rotated, attending over the cache's and the
// forward's keys and values (and the rows' shared prefixes' by cascade), gated where the family gates it.

#include "model/layers/mixer.h"

#include "model/layers/block_ops.h"
#include "model/ops/attention.h"
#include "model/ops/cast.h"
#include "model/ops/linear.h"
#include "model/ops/rope.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace prefix_scorer {
namespace {

// An attention head or output gate's factor from its projection: sigmoid, or softplus in fp32 rounded back.
at::Tensor gate_factor(const AttentionSpec& a, const at::Tensor& projected) {
  if (!a.gate_softplus) return at::sigmoid(projected);
  return cast(at::softplus(cast(projected, at::kFloat)), projected.scalar_type());
}

// A layer's queries [b, heads, t, head_dim] and, for a layer with keys and values of its own, its keys and values
// [b, kv_heads, t, head_dim]: views of one matmul over the stacked weights, normed (q/k norms) and rotated. q and k
// are normed and rotated together as one [b, t, heads + kv_heads, head_dim] view, unless normed over their whole
// widths (olmo2). A layer that reads another layer's keys and values projects q alone.
struct Projections {
  at::Tensor q, k, v;
};

// `projected` is [b, t, width], the input's projection by l.qkv (l.q for a layer that projects q alone).
Projections project(const AttentionSpec& a, const NormSpec& n, const LayerWeights& l, const at::Tensor& projected,
                    bool own_kv, const DeviceInputs& in) {
  const int64_t b = projected.size(0), t = projected.size(1);
  // layers without rope (smollm3's, gpt2's) attend without rotated positions
  auto rotate = [&](const at::Tensor& x) { return a.rope >= 0 ? apply_rotary(x, in.rotary.at(a.rope)) : x; };
  auto heads = [&](const at::Tensor& x, int64_t count) { return x.view({b, t, count, a.head_dim}); };
  // [b, t, count, head_dim] as [b, count, t, head_dim]: for one query a row (a decode step) the same memory, one
  // view instead of a transpose.
  auto head_major = [&](const at::Tensor& x, int64_t count) {
    return t == 1 ? x.view({b, count, 1, a.head_dim}) : x.transpose(1, 2);
  };
  const bool per_head = a.qk_norm == QkNorm::kPerHead || a.qk_norm == QkNorm::kUnitPerHead;
  const bool per_head_norm_before = per_head && !a.qk_norm_after_rope;
  const bool per_head_norm_after = per_head && a.qk_norm_after_rope;
  // heads [.., head_dim] normed by `weight`, or without one
  auto head_norm = [&](const at::Tensor& x, const at::Tensor& weight) {
    return a.qk_norm == QkNorm::kUnitPerHead ? unit_rms_norm(x, n.eps) : norm(x, weight, n);
  };
  if (!own_kv) {
    at::Tensor q = projected;
    if (a.qk_norm == QkNorm::kFullWidth) q = norm(q, l.q_norm, n);
    q = heads(q, a.heads);
    if (per_head_norm_before) q = head_norm(q, l.q_norm);
    q = rotate(q);
    if (per_head_norm_after) q = head_norm(q, l.q_norm);
    return {head_major(q, a.heads), {}, {}};
  }
  at::Tensor qkv = projected;
  if (l.qkv_scale.defined()) qkv = (qkv * l.qkv_scale).to(projected.scalar_type());  // the keys times their multiplier
  if (a.qk_norm == QkNorm::kFullWidth) {
    const std::vector<at::Tensor> parts = qkv.split_with_sizes({a.q_width(), a.kv_width(), a.kv_width()}, -1);
    const at::Tensor q = heads(norm(parts[0], l.q_norm, n), a.heads);
    const at::Tensor k = heads(norm(parts[1], l.k_norm, n), a.kv_heads);
    return {head_major(rotate(q), a.heads), head_major(rotate(k), a.kv_heads), head_major(heads(parts[2], a.kv_heads), a.kv_heads)};
  }
  // [b, heads + kv_heads (+ kv_heads), t, head_dim], head-major from the start: q and k, and v (its own heads, or
  // the keys' before their norm and rotation where values are keys)
  const int64_t all = a.heads + a.kv_heads * (a.keys_as_values ? 1 : 2);
  if (qkv.size(-1) != all * a.head_dim)
    throw std::logic_error(fmt::format("forward: a stacked projection of {} values for {} heads of {}", qkv.size(-1), all,
                                       a.head_dim));
  if (!qkv.is_contiguous()) qkv = qkv.contiguous();  // (a matmul's output is)
  const at::Tensor by_head = qkv.as_strided({b, all, t, a.head_dim}, {t * all * a.head_dim, a.head_dim, all * a.head_dim, 1},
                                            qkv.storage_offset());
  at::Tensor qk = by_head, v;
  if (a.keys_as_values) {
    v = by_head.narrow(1, a.heads, a.kv_heads);
  } else {
    const std::vector<at::Tensor> qk_v = by_head.split_with_sizes({a.heads + a.kv_heads, a.kv_heads}, 1);
    qk = qk_v[0];
    v = qk_v[1];
  }
  const at::Tensor qk_norm = a.qk_norm == QkNorm::kPerHead ? l.qk_norm.unsqueeze(1) : at::Tensor();  // [heads, 1, dim]
  if (per_head_norm_before) qk = head_norm(qk, qk_norm);
  if (a.rope >= 0) qk = apply_rotary(qk, in.rotary.at(a.rope), /*head_major=*/true);
  if (per_head_norm_after) qk = head_norm(qk, qk_norm);
  if (a.value_norm) v = unit_rms_norm(v, n.eps);
  const std::vector<at::Tensor> q_k = qk.split_with_sizes({a.heads, a.kv_heads}, 1);
  return {q_k[0], q_k[1], v};
}

// [b, heads, t, width] as [b, t, heads * width]: one view where its memory is token-major already (as attention
// kernels leave it, and always for t = 1), else a copy.
at::Tensor token_major(const at::Tensor& x) {
  const int64_t b = x.size(0), heads = x.size(1), t = x.size(2), width = x.size(3);
  const bool in_place = x.stride(3) == 1 && x.stride(1) == width && (t == 1 || x.stride(2) == heads * width) &&
                        (b == 1 || x.stride(0) == t * heads * width);
  if (in_place) return x.as_strided({b, t, heads * width}, {t * heads * width, heads * width, 1}, x.storage_offset());
  return x.transpose(1, 2).reshape({b, t, heads * width});
}

// The attention heads of one part of a forward, token-major [.., heads * head_dim] (its real tokens alone where the
// forward packs them), from `projected`, its tokens' share of the layer's projection. A layer with keys and values
// of its own computes them (after the cache's, when there is one) into produced[index]; a KV-shared layer takes
// those of its kv_layer from there, and from the shared prefixes at that layer. They are kept there only while a
// later layer reads them (`read_later`).
at::Tensor attend_part(const AttentionSpec& a, const NormSpec& n, const LayerWeights& l, const at::Tensor& h,
                       const at::Tensor& projected, const PartContext& part, int64_t index, bool read_later,
                       const std::vector<at::Tensor>& state) {
  const DeviceInputs& in = *part.in;
  const bool own_kv = a.kv_layer == index;
  Projections p = project(a, n, l, padded(projected, in), own_kv, in);
  if (a.query_scaled_by_position) p.q = cast(p.q * in.query_scale, p.q.scalar_type());
  if (own_kv) keep_produced({{p.k, p.v}, state}, part.cache, index, *part.produced);
  at::Tensor heads =
      attend_cached(a, p.q, part.produced->at(a.kv_layer), shared_prefix(part.shared, a.kv_layer), in, l.sinks);
  if (own_kv && !read_later) (*part.produced)[index] = {};
  // (a head-gated model never packs its tokens: h is [b, t, hidden] here)
  if (a.head_gate) heads = heads * gate_factor(a, linear(h, l.head_gate)).transpose(1, 2).unsqueeze(-1);
  return real_only(token_major(heads), in);
}

}  // namespace

at::Tensor attend_cached(const AttentionSpec& a, const at::Tensor& q, const LayerCache& produced,
                         const LayerCache* prefix, const DeviceInputs& in, const at::Tensor& sinks) {
  const LayerCache kv = produced.to(q.device());
  const FoldedMask& mask = in.mask(a.window, mask_group(q, a.kv_heads));
  const ScoreOptions scores{a.scale, a.softcap, sinks};
  if (prefix == nullptr) return attend(q, kv.keys(), kv.values(), mask, scores);
  const LayerCache shared = prefix->to(q.device());
  return attend_cascade(q, kv.keys(), kv.values(), mask, shared.keys(), shared.values(), in.groups, scores);
}

const LayerCache* shared_prefix(const SharedPrefixes* shared, int64_t layer) {
  return shared == nullptr ? nullptr : &shared->layers[layer];
}

void keep_produced(LayerCache fresh, KvCache* cache, int64_t index, std::vector<LayerCache>& produced) {
  produced[index] = std::move(fresh);
  if (cache == nullptr) return;
  cache->append_layer(index, produced[index]);
  produced[index] = cache->layer(index);
}

at::Tensor attention(const AttentionSpec& a, const NormSpec& n, const LayerWeights& l, const at::Tensor& h,
                     const std::vector<PartContext>& parts, int64_t index, bool read_later,
                     const std::vector<at::Tensor>& state) {
  const at::Tensor projected = a.kv_layer == index ? linear(h, l.qkv) : linear(h, l.q);
  at::Tensor by_token;
  if (parts.size() == 1) {
    by_token = attend_part(a, n, l, h, projected, parts.front(), index, read_later, state);
  } else {
    std::vector<at::Tensor> each;
    for (const PartContext& part : parts)
      each.push_back(attend_part(a, n, l, h, projected.narrow(1, part.in->first, part.in->real_count), part, index,
                                 read_later, state));
    by_token = at::cat(each, 1);
  }
  if (a.output_gate) by_token = by_token * gate_factor(a, linear(h, l.attn_gate));
  return linear(by_token, l.o);
}

// Keys and values of its kv heads a token, unless it reads another layer's; scores for every query head; a window's
// mask needs each row's prefix positions and soft-capping the whole row of scores, so either makes cascade inexact;
// sinks join either way (cascade folds them into its log-sum-exp merge).
MixerCosts attention_costs(const ModelSpec& spec, int64_t layer, int64_t) {
  const AttentionSpec& a = spec.layers.at(layer).attention;
  MixerCosts costs;
  costs.cached_per_token = costs.expanded_per_token = a.kv_layer == layer ? 2 * a.kv_width() : 0;
  costs.score_heads = a.heads;
  costs.cascade_exact = a.window == 0 && a.softcap == 0;
  return costs;
}

at::Tensor attention_mixer(const LayerSpec& s, const NormSpec& n, const LayerWeights& l, const at::Tensor& h,
                           const MixerContext& context) {
  return attention(s.attention, n, l, h, context.parts, context.index, context.read_later);
}

}  // namespace prefix_scorer
