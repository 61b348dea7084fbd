// Multi-head latent attention (DeepSeek V3's): latents cached, attended absorbed or expanded, whichever is cheaper.

#include "model/layers/mixer.h"

#include "model/layers/block_ops.h"
#include "model/ops/attention.h"
#include "model/ops/cast.h"
#include "model/ops/linear.h"
#include "model/ops/rope.h"

#include <algorithm>
#include <utility>

namespace prefix_scorer {
namespace {

// The width expanded keys and values take together (see expanded_latents).
int64_t expanded_width(const LatentSpec& m) { return std::max(m.nope_dim + m.rope_dim, m.value_dim); }

// Whether a latent-attention forward costs fewer multiply-adds expanded than absorbed: expanding costs kv_b_proj
// over every key it reads (`keys`), absorbing costs it over every query (`queries`), and a (query, key) pair costs
// 2 expanded_width expanded against 2 (kv_rank + rope) absorbed. So a prefill (as many queries as keys) and many
// rows' queries over one shared prefix expand; decode steps and a few queries over long caches absorb.
bool cheaper_expanded(const LatentSpec& m, int64_t queries, int64_t keys, int64_t pairs) {
  const int64_t per_token = m.kv_rank * (m.nope_dim + m.value_dim);
  return keys * per_token + pairs * 2 * expanded_width(m) < queries * per_token + pairs * 2 * m.latent_width();
}

// x [b, heads, t, in] times each head's matrix of `per_head` [heads, in, out]: [b, heads, t, out], as one batched
// matmul over the heads (the weights read once, whatever b).
at::Tensor by_head(const at::Tensor& x, const at::Tensor& per_head) {
  const int64_t b = x.size(0), heads = x.size(1), t = x.size(2);
  const at::Tensor out = at::bmm(x.transpose(0, 1).reshape({heads, b * t, x.size(3)}), per_head);
  return out.view({heads, b, t, out.size(2)}).transpose(0, 1);
}

// Latents [n, 1, s, kv_rank + rope_dim] expanded as transformers expands them, by each head's key and value rows of
// kv_b_proj: keys [n, heads, s, nope + rope] (the rotated part shared) and values [n, heads, s, value], the narrower
// of the two padded with zeros to the other's width (the fused kernels take one width; zeros add nothing to q . k,
// and the padded values' outputs are dropped).
LayerCache expanded_latents(const LatentSpec& m, const LayerWeights& l, const at::Tensor& latents) {
  const int64_t n = latents.size(0), s = latents.size(2), heads = l.key_up.size(0), width = expanded_width(m);
  const at::Tensor nope = latents.narrow(-1, 0, m.kv_rank);  // [n, 1, s, kv_rank]
  auto per_head = [&](const at::Tensor& rows) {  // rows [heads, out, kv_rank]: [n, heads, s, out]
    return linear(nope, {rows.view({-1, m.kv_rank}), {}}).view({n, s, heads, rows.size(1)}).transpose(1, 2);
  };
  const at::Tensor rope = latents.narrow(-1, m.kv_rank, m.rope_dim).expand({-1, heads, -1, -1});
  const at::Tensor keys = at::cat({per_head(l.key_up), rope}, -1);
  const at::Tensor values = per_head(l.value_up);
  return {{at::constant_pad_nd(keys, {0, width - keys.size(-1)}), at::constant_pad_nd(values, {0, width - m.value_dim})},
          {}};
}

// Multi-head latent attention (see LatentSpec) over the normed input `h` [b, t, hidden]: one matmul gives the query's
// input and the latent; the latent's first kv_rank values normed (epsilon 1e-6, as DeepSeek's norms without one
// given), its last rope_dim rotated (where the layer has a rope), kept as one key [b, 1, t, kv_rank + rope_dim]. Then attention in the cheaper
// of two exact forms (cheaper_expanded): absorbed, each head's unrotated query in the latent's space beside its
// rotated part, over the latents as keys and values, the output's first kv_rank values expanded by each head's
// value rows; or expanded, the latents (the forward's and its shared prefixes') expanded to each head's keys and
// values, as transformers computes it. Then a head gate where the layer has one, and o_proj.
at::Tensor latent_attention(const LayerSpec& s, const LayerWeights& l, const at::Tensor& h, const DeviceInputs& in,
                            KvCache* cache, const SharedPrefixes* shared, int64_t index,
                            std::vector<LayerCache>& produced) {
  const AttentionSpec& a = s.attention;
  const LatentSpec& m = s.latent;
  const int64_t b = h.size(0), t = h.size(1);
  const NormSpec latent_norm;
  const int64_t q_in = m.q_rank > 0 ? m.q_rank : m.q_width(a.heads);
  const std::vector<at::Tensor> parts =
      linear(h, l.qkv).split_with_sizes({q_in, m.kv_rank, m.rope_dim}, -1);
  const at::Tensor q = (m.q_rank > 0 ? linear(rms_norm(parts[0], l.q_a_norm, latent_norm), l.q) : parts[0])
                           .view({b, t, a.heads, m.nope_dim + m.rope_dim});
  auto rotated = [&](const at::Tensor& x) { return a.rope < 0 ? x : apply_rotary(x, in.rotary.at(a.rope)); };
  const at::Tensor q_rope = rotated(q.narrow(-1, m.nope_dim, m.rope_dim)).transpose(1, 2);
  const at::Tensor k_rope = rotated(parts[2].view({b, t, 1, m.rope_dim}));
  keep_produced({{at::cat({rms_norm(parts[1], l.kv_a_norm, latent_norm).unsqueeze(2), k_rope}, -1).transpose(1, 2)}, {}},
                cache, index, produced);
  const LayerCache kv = std::move(produced[index]);
  produced[index] = {};
  const at::Tensor q_nope = q.narrow(-1, 0, m.nope_dim).transpose(1, 2);
  auto scaled = [&](const at::Tensor& query) {
    return a.query_scaled_by_position ? cast(query * in.query_scale, query.scalar_type()) : query;
  };
  const LayerCache* prefix = shared_prefix(shared, index);
  const int64_t slots = kv.slots(), prefix_slots = prefix == nullptr ? 0 : prefix->slots();
  const int64_t prefix_keys = prefix == nullptr ? 0 : prefix->keys().size(0) * prefix_slots;
  at::Tensor heads;  // [b, heads, t, value_dim]
  const LatentForm form = latent_form();
  if (form == LatentForm::kCheaper ? cheaper_expanded(m, b * t, b * slots + prefix_keys, b * t * (slots + prefix_slots))
                                   : form == LatentForm::kExpanded) {
    const at::Tensor query =
        at::constant_pad_nd(at::cat({q_nope, q_rope}, -1), {0, expanded_width(m) - m.nope_dim - m.rope_dim});
    AttentionSpec expanded = a;
    expanded.kv_heads = a.heads;
    const LayerCache shared_expanded =
        prefix == nullptr ? LayerCache() : expanded_latents(m, l, prefix->keys().to(h.device()));
    heads = attend_cached(expanded, scaled(query), expanded_latents(m, l, kv.keys().to(h.device())),
                          prefix == nullptr ? nullptr : &shared_expanded, in, {})
                .narrow(-1, 0, m.value_dim);
  } else {
    const at::Tensor query = at::cat({by_head(q_nope, l.key_up), q_rope}, -1);
    const at::Tensor latents = attend_cached(a, scaled(query), kv, prefix, in, {});
    heads = by_head(latents.narrow(-1, 0, m.kv_rank), l.value_up.transpose(1, 2));
  }
  if (a.head_gate)  // Ling 3's: each head's output times sigmoid (in fp32, rounded back) of its projection of h
    heads = heads * cast(at::sigmoid(cast(linear(h, l.head_gate), at::kFloat)), heads.scalar_type()).transpose(1, 2).unsqueeze(-1);
  return linear(heads.transpose(1, 2).reshape({b, t, a.heads * m.value_dim}), l.o);
}

}  // namespace

// A token's latent (kv_rank + rope_dim values) cached, every head's keys and values when expanded; as attention's
// otherwise.
MixerCosts latent_attention_costs(const ModelSpec& spec, int64_t layer, int64_t dtype_bytes) {
  const LayerSpec& s = spec.layers.at(layer);
  MixerCosts costs = attention_costs(spec, layer, dtype_bytes);
  costs.cached_per_token = s.latent.latent_width();
  costs.expanded_per_token = s.attention.heads * (s.latent.nope_dim + s.latent.rope_dim + s.latent.value_dim);
  return costs;
}

at::Tensor latent_attention_mixer(const LayerSpec& s, const NormSpec&, const LayerWeights& l, const at::Tensor& h,
                                  const MixerContext& context) {
  return latent_attention(s, l, h, context.in(), context.cache(), context.shared(), context.index, context.produced());
}

}  // namespace prefix_scorer
