#include "model/ops/attention.h"

#include "model/ops/cast.h"
#include "model/ops/decode_attention.h"
#include "model/ops/merge_attention.h"

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

namespace prefix_scorer {
namespace {

std::atomic<bool> matmul_everywhere{false};
std::atomic<LatentForm> taken_latent_form{LatentForm::kCheaper};

// The scale of q·kᵀ: the config's when it gives one (> 0), else 1 / sqrt(head dim).
double score_scale_or_default(double scale, int64_t head_dim) {
  return scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(head_dim));
}

// Folds the query heads that share one kv head into the query axis: [b, kv_heads, group * queries, dim], so
// grouped-query attention needs no copy of k and v. The mask follows: [b, 1, group * queries, keys].
at::Tensor fold_groups(const at::Tensor& q, int64_t kv_heads) {
  const int64_t b = q.size(0), heads = q.size(1), queries = q.size(2), dim = q.size(3);
  return q.reshape({b, kv_heads, heads / kv_heads * queries, dim});
}

at::Tensor fold_visible(const at::Tensor& mask, int64_t group) {
  if (group == 1) return mask;
  const int64_t b = mask.size(0), queries = mask.size(2), keys = mask.size(3);
  return mask.unsqueeze(2).expand({b, 1, group, queries, keys}).reshape({b, 1, group * queries, keys});
}

// The causal mask of `queries` queries over as many keys, on `like`'s device, as [1, 1, queries, queries].
at::Tensor causal_mask(int64_t queries, const at::Tensor& like) {
  return at::ones({queries, queries}, like.options().dtype(at::kBool)).tril().view({1, 1, queries, queries});
}

at::Tensor unfold_groups(const at::Tensor& out, int64_t heads) {
  const int64_t b = out.size(0), dim = out.size(3);
  return out.reshape({b, heads, -1, dim});
}

// Per-head sink logits [heads] laid out as the rows of queries [b, h, rows, ...] that fold heads / h query heads
// into each of their h heads (h = heads: none folded): [1, h, rows] fp32.
at::Tensor sink_logits(const at::Tensor& sinks, int64_t h, int64_t rows) {
  const int64_t group = sinks.size(0) / h;
  return sinks.to(at::kFloat).view({1, h, group, 1}).expand({1, h, group, rows / group}).reshape({1, h, rows});
}

CascadeKernel kernel_for(const at::Tensor& q, CascadeKernel kernel) {
  if (kernel != CascadeKernel::kByDevice) return kernel;
  return q.device().is_cpu() && !matmul_everywhere ? CascadeKernel::kFusedCpu : CascadeKernel::kMatmul;
}

// The mask's query-group size for `kernel` on q's device: the fused CPU kernel takes grouped-query heads as they are
// (each kv head serving its group), the matmul kernel and torch's SDPA with a mask take them folded.
int64_t mask_group(const at::Tensor& q, int64_t kv_heads, CascadeKernel kernel) {
  return kernel_for(q, kernel) == CascadeKernel::kFusedCpu ? 1 : q.size(1) / kv_heads;
}

// torch's fused CPU flash kernel under an additive mask: out in q's dtype and layout, and lse [b, heads, queries].
std::tuple<at::Tensor, at::Tensor> flash_cpu(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                             const at::Tensor& additive, double scale) {
  const auto [out, lse] = at::_scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, false, additive, scale);
  return {out, lse};
}

// Attention of queries q [b, h, queries, dim] (folded for the matmul kernel, grouped for the fused one) over keys,
// normalised over those keys, and the log of its softmax sum: [..., dim] and [b, h, queries], both fp32. The mask is
// bool, and for the fused kernel additive too where already made (else made here). The matmul kernel takes q·kᵀ in
// fp32 whatever the dtype, as fused kernels accumulate it, so that bf16 scores are not rounded before the softmax.
std::pair<at::Tensor, at::Tensor> partial_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                    const at::Tensor& mask, const at::Tensor& additive, double scale,
                                                    CascadeKernel kernel) {
  if (kernel == CascadeKernel::kFusedCpu) {
    if (cpu::can_attend_decode(q, k, v, mask)) return cpu::attend_decode(q, k, v, mask, scale);
    const auto [out, lse] = flash_cpu(q, k, v, additive.defined() ? additive : additive_mask(mask, q.scalar_type()), scale);
    return {cast(out, at::kFloat), lse};
  }
  at::Tensor scores = at::matmul(q.to(at::kFloat), k.to(at::kFloat).transpose(-1, -2)) * scale;
  scores.masked_fill_(mask.logical_not(), -1e30);
  const at::Tensor lse = at::logsumexp(scores, -1);
  const at::Tensor out = at::matmul(at::exp(scores - lse.unsqueeze(-1)).to(v.scalar_type()), v).to(at::kFloat);
  return {out, lse};
}

// A part's (out, lse) with the sinks joined (`sinks` laid out as lse's rows, sink_logits): a key of logit s whose
// value is zero adds e^s to the softmax sum and nothing to the output.
std::pair<at::Tensor, at::Tensor> with_sinks(const at::Tensor& out, const at::Tensor& lse, const at::Tensor& sinks) {
  const at::Tensor total = at::logaddexp(lse, sinks);
  return {out * at::exp(lse - total).unsqueeze(-1), total};
}

// Rows [r, h, queries, ...] whose memory runs token-major (a row's queries one stride apart, rows `queries` such
// strides apart) as [r / n, h, n * queries, ...], each n rows' queries side by side as one sequence: one view.
// Undefined for rows laid out otherwise.
bool runs_token_major(const at::Tensor& rows) { return rows.stride(0) == rows.size(2) * rows.stride(2); }

at::Tensor side_by_side(const at::Tensor& rows, int64_t n) {
  if (!runs_token_major(rows)) return {};
  std::vector<int64_t> sizes = rows.sizes().vec(), strides = rows.strides().vec();
  sizes[0] /= n;
  sizes[2] *= n;
  strides[0] *= n;
  return rows.as_strided(sizes, strides, rows.storage_offset());
}

// The inverse: sequences [p, h, n * queries, ...] as [p * n, h, queries, ...], one view where they run as
// side_by_side leaves them; undefined otherwise.
at::Tensor one_by_one(const at::Tensor& sequences, int64_t n) {
  if (!runs_token_major(sequences)) return {};
  std::vector<int64_t> sizes = sequences.sizes().vec(), strides = sequences.strides().vec();
  sizes[0] *= n;
  sizes[2] /= n;
  strides[0] /= n;
  return sequences.as_strided(sizes, strides, sequences.storage_offset());
}

// The mask made for `kernel`'s query-group size (see mask_group), checked against it.
const FoldedMask& checked(const FoldedMask& mask, const at::Tensor& q, int64_t kv_heads, CascadeKernel kernel) {
  const int64_t rows = mask_group(q, kv_heads, kernel) * q.size(2);
  if (mask.visible.defined() && mask.visible.size(2) != rows)
    throw std::logic_error("attention: a mask folded for another kernel's query groups (see mask_group)");
  return mask;
}

}  // namespace

int64_t mask_group(const at::Tensor& q, int64_t kv_heads) { return mask_group(q, kv_heads, CascadeKernel::kByDevice); }

at::Tensor attention_mask(const at::Tensor& query_positions, const at::Tensor& key_positions,
                          const at::Tensor& key_valid, int64_t sliding_window) {
  const at::Tensor q = query_positions.unsqueeze(2);  // [b, queries, 1]
  const at::Tensor k = key_positions.unsqueeze(1);    // [b, 1, keys]
  at::Tensor mask = (k <= q).logical_and(key_valid.unsqueeze(1));
  if (sliding_window > 0) mask = mask.logical_and(k > q - sliding_window);
  return mask.unsqueeze(1);
}

at::Tensor packed_attention_mask(const at::Tensor& query_positions, const at::Tensor& key_positions,
                                 const at::Tensor& key_valid, int64_t sliding_window, const PackedKeys& packed) {
  at::Tensor mask = attention_mask(query_positions, key_positions, key_valid, sliding_window);
  if (packed.key_segment.defined()) {
    const at::Tensor k = packed.key_segment.unsqueeze(1);  // [b, 1, keys]
    mask = mask.logical_and(k.lt(0).logical_or(k.eq(packed.query_segment.unsqueeze(2))).unsqueeze(1));
  }
  if (packed.key_branch.defined()) {
    const at::Tensor k = packed.key_branch.unsqueeze(1);
    mask = mask.logical_and(k.eq(0).logical_or(k.eq(packed.query_branch.unsqueeze(2))).unsqueeze(1));
  }
  return mask;
}

at::Tensor attend_reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                            const ScoreOptions& options) {
  const int64_t heads = q.size(1), kv_heads = k.size(1);
  const at::Tensor qf = fold_groups(q, kv_heads);
  const at::Tensor visible = mask.defined() ? mask.to(q.device()) : causal_mask(q.size(2), q);  // causal where none
  const at::Tensor mf = fold_visible(visible, heads / kv_heads);
  const double scale = score_scale_or_default(options.scale, q.size(-1));
  at::Tensor scores = at::matmul(qf, k.transpose(-1, -2)) * scale;
  if (options.softcap > 0) scores = at::tanh(scores / options.softcap) * options.softcap;
  // The lowest finite score, not -inf: a query that sees no key (padding) gets finite weights, never NaN.
  scores = scores.to(at::kFloat).masked_fill(mf.logical_not(), std::numeric_limits<float>::lowest());
  if (!options.sinks.defined()) return unfold_groups(at::matmul(at::softmax(scores, -1).to(q.scalar_type()), v), heads);
  // The sink as one more key column, dropped after the softmax.
  const at::Tensor sinks = sink_logits(options.sinks, kv_heads, qf.size(2)).unsqueeze(-1).expand({scores.size(0), -1, -1, 1});
  const at::Tensor probs = at::softmax(at::cat({scores, sinks}, -1), -1).narrow(-1, 0, scores.size(-1));
  return unfold_groups(at::matmul(probs.to(q.scalar_type()), v), heads);
}

FoldedMask fold_mask(const at::Tensor& mask, int64_t group, at::ScalarType dtype) {
  if (!mask.defined()) return {};
  FoldedMask folded{mask, fold_visible(mask, group), {}};
  if (mask.device().is_cpu()) folded.additive = additive_mask(folded.visible, dtype);
  return folded;
}

at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                  const ScoreOptions& options) {
  const at::Tensor on_device = mask.defined() ? mask.to(q.device()) : mask;
  return attend(q, k, v, fold_mask(on_device, mask_group(q, k.size(1)), q.scalar_type()), options);
}

at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const FoldedMask& mask,
                  const ScoreOptions& options) {
  if (options.softcap > 0) return attend_reference(q, k, v, mask.plain, options);
  const int64_t heads = q.size(1), kv_heads = k.size(1);
  const CascadeKernel kernel = kernel_for(q, CascadeKernel::kByDevice);
  const double scale = score_scale_or_default(options.scale, q.size(-1));
  if (options.sinks.defined()) {  // by the cascade's kernels, whose log-sum-exp the sinks join
    const FoldedMask causal = mask.plain.defined() ? FoldedMask{}
                                                   : fold_mask(causal_mask(q.size(2), q), mask_group(q, kv_heads), q.scalar_type());
    const FoldedMask& m = checked(mask.plain.defined() ? mask : causal, q, kv_heads, kernel);
    const at::Tensor qk = kernel == CascadeKernel::kFusedCpu ? q : fold_groups(q, kv_heads);
    const auto [out, lse] = partial_attention(qk, k, v, m.visible, m.additive, scale, kernel);
    const at::Tensor joined = cast(with_sinks(out, lse, sink_logits(options.sinks, qk.size(1), qk.size(2))).first, q.scalar_type());
    return kernel == CascadeKernel::kFusedCpu ? joined : unfold_groups(joined, heads);
  }
  if (!mask.plain.defined())
    return at::scaled_dot_product_attention(q, k, v, {}, 0.0, true, options.scale > 0 ? std::optional<double>(scale) : std::nullopt, true);
  checked(mask, q, kv_heads, kernel);
  if (kernel == CascadeKernel::kFusedCpu) {
    if (cpu::can_attend_decode(q, k, v, mask.visible)) return cpu::attend_decode(q, k, v, mask.visible, scale).first;
    return std::get<0>(flash_cpu(q, k, v, mask.additive, scale));
  }
  return unfold_groups(at::scaled_dot_product_attention(fold_groups(q, kv_heads), k, v, mask.visible, 0.0, false, scale),
                       heads);
}

at::Tensor additive_mask(const at::Tensor& mask, at::ScalarType dtype) {
  const double floor = dtype == at::kHalf ? -65504.0 : -1e30;
  return at::full(mask.sizes(), floor, mask.options().dtype(dtype)).masked_fill_(mask, 0);
}

void take_matmul_cascade_everywhere(bool on) { matmul_everywhere = on; }

void take_latent_form(LatentForm form) { taken_latent_form = form; }
LatentForm latent_form() { return taken_latent_form; }

PrefixGroups prefix_groups(const at::Tensor& lengths, const at::Tensor& row_prefix, int64_t longest) {
  const int64_t prefixes = lengths.size(0), batch = row_prefix.size(0);
  std::vector<int64_t> count(prefixes, 0), row_slot(batch);
  auto rp = row_prefix.accessor<int64_t, 1>();
  for (int64_t r = 0; r < batch; ++r) row_slot[r] = count[rp[r]]++;
  PrefixGroups g;
  g.rows_per_prefix = std::max<int64_t>(1, *std::max_element(count.begin(), count.end()));
  std::vector<int64_t> slot_rows(prefixes * g.rows_per_prefix, 0);
  for (int64_t r = 0; r < batch; ++r) {
    row_slot[r] += rp[r] * g.rows_per_prefix;
    slot_rows[row_slot[r]] = r;
  }
  g.slot_rows = at::tensor(slot_rows, at::kLong);
  g.row_slot = at::tensor(row_slot, at::kLong);
  g.key_valid = at::empty({prefixes, 1, 1, longest}, at::kBool);
  bool* valid = g.key_valid.data_ptr<bool>();
  const at::Tensor lengths_long = cast(lengths, at::kLong);
  const auto length = lengths_long.accessor<int64_t, 1>();
  for (int64_t p = 0; p < prefixes; ++p) {
    for (int64_t s = 0; s < longest; ++s) valid[p * longest + s] = s < length[p];
  }
  g.rows_in_slots = static_cast<int64_t>(slot_rows.size()) == batch;
  for (int64_t r = 0; g.rows_in_slots && r < batch; ++r) g.rows_in_slots = row_slot[r] == r;
  return g;
}

at::Tensor attend_cascade(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                          const at::Tensor& prefix_keys, const at::Tensor& prefix_values, const PrefixGroups& groups,
                          const ScoreOptions& scores, CascadeKernel kernel) {
  return attend_cascade(q, k, v, fold_mask(mask.to(q.device()), mask_group(q, k.size(1), kernel), q.scalar_type()),
                        prefix_keys, prefix_values, groups, scores, kernel);
}

at::Tensor attend_cascade(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const FoldedMask& mask,
                          const at::Tensor& prefix_keys, const at::Tensor& prefix_values, const PrefixGroups& groups,
                          const ScoreOptions& scores, CascadeKernel kernel) {
  if (scores.softcap > 0) throw std::invalid_argument("cascade attention does not support soft-capped scores");
  kernel = kernel_for(q, kernel);
  checked(mask, q, k.size(1), kernel);
  const int64_t heads = q.size(1), kv_heads = k.size(1), dim = q.size(3);
  const int64_t prefixes = prefix_keys.size(0), n = groups.rows_per_prefix;
  const double scale = score_scale_or_default(scores.scale, dim);
  // [b, h, queries, dim]: grouped heads as they are for the fused kernel, folded (h = kv_heads) for the matmul one
  const at::Tensor qf = kernel == CascadeKernel::kFusedCpu ? q : fold_groups(q, kv_heads);
  const int64_t h = qf.size(1), queries = qf.size(2);
  // The prefix part (by slots, row r's in slot_of_row[r] where defined) merged with the suffix part's rows.
  auto merged = [&](const at::Tensor& out_p, const at::Tensor& lse_p, const at::Tensor& out_s, const at::Tensor& lse_s,
                    const at::Tensor& slot_of_row = {}) {
    const at::Tensor out = merge_attention_rows(out_p, lse_p, out_s, lse_s, q.scalar_type(), slot_of_row);
    return kernel == CascadeKernel::kFusedCpu ? out : unfold_groups(out, heads);
  };

  // Suffix part: each row over its own keys, under the causal / validity mask; the sinks join it.
  auto [out_s, lse_s] = partial_attention(qf, k, v, mask.visible, mask.additive, scale, kernel);
  if (scores.sinks.defined()) std::tie(out_s, lse_s) = with_sinks(out_s, lse_s, sink_logits(scores.sinks, h, queries));

  // Prefix part: the queries of each prefix's rows side by side as one sequence, every prefix slot visible (wider
  // query blocks for the kernels than row by row: on the CPU 1.5x faster for 4 rows of 4 queries over 900 keys, 4x
  // for 16 rows of one). One view of the rows in slot order where their memory is token-major (as the projections
  // leave q; gathered into slot order first, token-major still, unless they are in it), else a reordering copy. One
  // prefix's rows need no reordering: [b, h, queries, dim] and [1, h, b * queries, dim] are one transpose apart.
  const bool one_prefix = groups.rows_in_slots && prefixes == 1;
  const at::Tensor in_slots = groups.rows_in_slots ? qf
                              : runs_token_major(qf) ? qf.transpose(1, 2).index_select(0, groups.slot_rows).transpose(1, 2)
                                            : qf.index_select(0, groups.slot_rows);
  at::Tensor qp = side_by_side(in_slots, n);
  if (!qp.defined())
    qp = one_prefix ? qf.transpose(0, 1).reshape({1, h, n * queries, dim})
                    : in_slots.view({prefixes, n, h, queries, dim}).transpose(1, 2).reshape({prefixes, h, n * queries, dim});
  auto [out_p, lse_p] = partial_attention(qp, prefix_keys, prefix_values, groups.key_valid, groups.additive_key_valid,
                                          scale, kernel);
  // [prefixes, h, n * queries, ...] -> [prefixes * n, h, queries, ...] by slots, for out (a trailing dim) and lse
  // (none); the merge reads each row's slot.
  auto by_slot = [&](const at::Tensor& t) {
    at::Tensor slots = one_by_one(t, n);
    if (slots.defined()) return slots;
    std::vector<int64_t> split{prefixes, h, n, queries}, rows{prefixes * n, h, queries};
    for (int64_t d = 3; d < t.dim(); ++d) {
      split.push_back(t.size(d));
      rows.push_back(t.size(d));
    }
    if (one_prefix) return t.view(at::IntArrayRef(split).slice(1)).transpose(0, 1);
    return t.view(split).transpose(1, 2).reshape(rows);
  };
  return merged(by_slot(out_p), by_slot(lse_p), out_s, lse_s, groups.rows_in_slots ? at::Tensor() : groups.row_slot);
}

}  // namespace prefix_scorer
