#pragma once
// Scaled dot-product attention with grouped-query heads and an explicit boolean mask.

#include <ATen/ATen.h>
#include "model/forward_batch.h"

namespace prefix_scorer {

// [batch, 1, queries, keys] bool: true where a query may attend to a key. A query sees the valid keys at
// positions up to its own (and within `sliding_window` of it when that is positive). All tensors on the CPU.
at::Tensor attention_mask(const at::Tensor& query_positions, const at::Tensor& key_positions,
                          const at::Tensor& key_valid, int64_t sliding_window);

// The segments and branches of packed rows' queries and keys (see ForwardBatch); either pair may be undefined.
// Cached keys are of segment -1 (seen by every segment) and branch 0.
struct PackedKeys {
  at::Tensor query_segment, key_segment;
  at::Tensor query_branch, key_branch;
};

// The same for packed rows: a key of another segment is invisible, and so is a key of branch b > 0 to queries of
// other branches.
at::Tensor packed_attention_mask(const at::Tensor& query_positions, const at::Tensor& key_positions,
                                 const at::Tensor& key_valid, int64_t sliding_window, const PackedKeys& packed);

// How attention scores are formed: q . k times `scale` (0: 1 / sqrt(dim)), then, for `softcap` > 0, soft-capped
// to softcap * tanh(score / softcap) (gemma2). `sinks` [heads], when defined, are a logit per head that joins each
// query's softmax as a key whose value is zero (gpt_oss): the weights of the real keys sum to less than one.
struct ScoreOptions {
  double scale = 0;
  double softcap = 0;
  at::Tensor sinks;
};

// A mask made ready once per forward for every layer of one window and one query-group size (mask_group): folded
// so that the queries sharing a kv head are one sequence, and additive in the model dtype (0 where visible,
// a finite floor where not) for the fused CPU kernel.
struct FoldedMask {
  at::Tensor plain;     // [b, 1, queries, keys] bool; undefined: plain causal over as many keys as queries
  at::Tensor visible;   // [b, 1, group * queries, keys] bool, on the mask's device; undefined with plain
  at::Tensor additive;  // the same, additive; defined only for a mask on the CPU
};

FoldedMask fold_mask(const at::Tensor& mask, int64_t group, at::ScalarType dtype);

// The query-group size a FoldedMask for queries q [b, heads, queries, dim] over kv_heads heads is folded by on q's
// device: 1 where torch's fused CPU kernel takes grouped heads as they are, else heads / kv_heads.
int64_t mask_group(const at::Tensor& q, int64_t kv_heads);

// q [batch, heads, queries, dim], k and v [batch, kv_heads, keys, dim] with heads a multiple of kv_heads;
// returns [batch, heads, queries, dim], through at::scaled_dot_product_attention (through matmul and softmax when
// soft-capped, as transformers' eager attention; with sinks, through the cascade's kernels, whose log-sum-exp
// takes them in). An undefined mask means plain causal attention over as many keys as queries.
at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                  const ScoreOptions& scores = {});
at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const FoldedMask& mask,
                  const ScoreOptions& scores = {});

// Which queries share a prefix: the rows of each prefix padded to the same count, and each row's slot.
struct PrefixGroups {
  int64_t rows_per_prefix = 0;  // the most rows any prefix has in the batch
  at::Tensor slot_rows;         // [prefixes * rows_per_prefix] int64: the row in each slot (0 in padding slots)
  at::Tensor row_slot;          // [batch] int64: each row's slot
  at::Tensor key_valid;         // [prefixes, 1, 1, longest] bool: real prefix slots
  at::Tensor additive_key_valid;  // the same, additive in the model dtype, for the fused CPU kernel; may be undefined
  bool rows_in_slots = false;   // slot i holds row i: every prefix has rows_per_prefix rows, in prefix order
};

// Groups on the CPU for prefix `lengths` [prefixes] and `row_prefix` [batch], prefixes `longest` slots long.
PrefixGroups prefix_groups(const at::Tensor& lengths, const at::Tensor& row_prefix, int64_t longest);

// Cascade attention: q [batch, heads, queries, dim] attends to its row's shared prefix (prefix_keys and
// prefix_values [prefixes, kv_heads, longest, dim], every prefix slot visible) and to its own k and v under
// `mask`, exactly as one attention over the concatenation would. The prefix part runs once per prefix with
// all its rows' queries as one sequence; the two parts (and the sinks, if any) merge by log-sum-exp in fp32.
// Scores scale by `scores.scale` (0: 1 / sqrt(dim)); soft-capped scores are not supported.
// How each part of a cascade is computed: torch's fused CPU flash kernel (no score matrix), or matmuls with the
// scores in fp32 (any device; what CUDA runs, and CPU tests take it too). kByDevice: fused on the CPU, else matmul
// (or matmul everywhere while a test asks for it).
enum class CascadeKernel { kByDevice, kFusedCpu, kMatmul };

// Test-only: kByDevice takes the matmul kernel on the CPU too, so that CPU tests run CUDA's cascade end to end.
void take_matmul_cascade_everywhere(bool on);

// Which exact form latent attention takes (model.cpp's latent_attention): the cheaper for each forward's shape, or
// (test-only, so that tests run each form on every path) one of them always.
enum class LatentForm { kCheaper, kAbsorbed, kExpanded };
void take_latent_form(LatentForm form);
LatentForm latent_form();

at::Tensor attend_cascade(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                          const at::Tensor& prefix_keys, const at::Tensor& prefix_values, const PrefixGroups& groups,
                          const ScoreOptions& scores = {}, CascadeKernel kernel = CascadeKernel::kByDevice);
at::Tensor attend_cascade(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const FoldedMask& mask,
                          const at::Tensor& prefix_keys, const at::Tensor& prefix_values, const PrefixGroups& groups,
                          const ScoreOptions& scores = {}, CascadeKernel kernel = CascadeKernel::kByDevice);

// A bool mask as an additive one in `dtype`: 0 where visible, a finite floor where not, so that a query with no
// visible key gets a finite log-sum-exp far below any real one (weight 0 in a merge) instead of NaN.
at::Tensor additive_mask(const at::Tensor& mask, at::ScalarType dtype);

// The same through matmul and softmax: the test oracle for attend and attend_cascade.
at::Tensor attend_reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const at::Tensor& mask, const ScoreOptions& scores = {});

}  // namespace prefix_scorer
