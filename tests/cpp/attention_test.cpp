// Attention: masks (positions, validity, windows), grouped and multi-query heads, cascade over shared prefixes
// against attention over the concatenation, the log-sum-exp merge.

#include "model/ops/merge_attention.h"
#include "test_support.h"

#include <gtest/gtest.h>

namespace prefix_scorer::test {
namespace {

TEST(Attention, MaskHonoursPositionsValidityAndWindow) {
  const at::Tensor pos = at::arange(6, at::kLong).unsqueeze(0);
  at::Tensor valid = at::ones({1, 6}, at::kBool);
  valid[0][2] = false;
  const at::Tensor mask = attention_mask(pos, pos, valid, 0)[0][0];
  EXPECT_TRUE(mask[5][4].item<bool>());
  EXPECT_FALSE(mask[4][5].item<bool>());  // the future
  EXPECT_FALSE(mask[5][2].item<bool>());  // padding
  const at::Tensor windowed = attention_mask(pos, pos, valid, 2)[0][0];
  EXPECT_TRUE(windowed[5][4].item<bool>());
  EXPECT_FALSE(windowed[5][3].item<bool>());
}

// Grouped-query and multi-query attention against an explicit per-head computation with repeated k and v.
class GroupedAttention : public testing::TestWithParam<int64_t> {};

TEST_P(GroupedAttention, MatchesRepeatedHeads) {
  const int64_t b = 2, heads = 4, kv_heads = GetParam(), t = 5, s = 7, d = 8;
  at::manual_seed(3);
  const at::Tensor q = at::randn({b, heads, t, d}), k = at::randn({b, kv_heads, s, d}), v = at::randn({b, kv_heads, s, d});
  const at::Tensor key_pos = at::arange(s, at::kLong).expand({b, s});
  const at::Tensor query_pos = at::arange(s - t, s, at::kLong).expand({b, t});
  at::Tensor valid = at::ones({b, s}, at::kBool);
  valid[1][0] = false;
  const at::Tensor mask = attention_mask(query_pos, key_pos, valid, 0);

  const at::Tensor kr = k.repeat_interleave(heads / kv_heads, 1), vr = v.repeat_interleave(heads / kv_heads, 1);
  const at::Tensor scores = at::matmul(q, kr.transpose(-1, -2)) / std::sqrt(static_cast<double>(d));
  const at::Tensor probs = at::softmax(scores.masked_fill(mask.logical_not(), -1e30), -1);
  const at::Tensor expected = at::matmul(probs, vr);
  EXPECT_TRUE(at::allclose(attend_reference(q, k, v, mask), expected, 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(attend(q, k, v, mask), expected, 1e-5, 1e-5));
}

// The largest difference between cascade (by `kernel`, in `dtype`) and one reference attention in fp32 over the
// concatenation of each row's prefix and its own keys, on inputs rounded to `dtype`.
// How the rows continue the prefixes: kMixed, rows 0 and 2 prefix 0 (5 slots), row 1 prefix 1 (3 of its 5 slots
// real), row 3 none; kInSlots, rows 0 and 1 prefix 0 and rows 2 and 3 prefix 1; kOnePrefix, every row prefix 0.
// The last two keep each row in its own slot (no reordering), the last one with a shortcut of its own.
enum class RowLayout { kMixed, kInSlots, kOnePrefix };

// With `token_major_q`, q's memory is laid out [b, t, heads, d], as the model's projections leave it (cascade then
// lays each prefix's rows side by side as views of it).
double cascade_error(int64_t kv_heads, CascadeKernel kernel, at::ScalarType dtype, bool sinks = false,
                     RowLayout layout = RowLayout::kMixed, bool token_major_q = false) {
  const int64_t b = 4, heads = 4, t = 3, longest = 5, d = 8;
  at::manual_seed(5);
  auto draw = [dtype](std::vector<int64_t> shape) { return at::randn(shape).to(dtype); };
  const at::Tensor q = token_major_q ? draw({b, t, heads, d}).transpose(1, 2) : draw({b, heads, t, d});
  const at::Tensor k = draw({b, kv_heads, t, d}), v = draw({b, kv_heads, t, d});
  auto longs = [](std::vector<int64_t> values) { return at::tensor(values, at::kLong); };
  const at::Tensor lengths = layout == RowLayout::kMixed     ? longs({5, 3, 0})
                             : layout == RowLayout::kInSlots ? longs({5, 3})
                                                             : longs({5});
  const at::Tensor row_prefix = layout == RowLayout::kMixed     ? longs({0, 1, 0, 2})
                                : layout == RowLayout::kInSlots ? longs({0, 0, 1, 1})
                                                                : longs({0, 0, 0, 0});
  const at::Tensor pk = draw({lengths.size(0), kv_heads, longest, d}), pv = draw({lengths.size(0), kv_heads, longest, d});
  EXPECT_EQ(prefix_groups(lengths, row_prefix, longest).rows_in_slots, layout != RowLayout::kMixed);
  at::Tensor own_valid = at::ones({b, t}, at::kBool);
  own_valid[2][2] = false;  // padding in row 2's suffix
  const at::Tensor own_pos = at::arange(t, at::kLong).expand({b, t}) + 10;
  ScoreOptions scores;
  if (sinks) scores.sinks = at::randn({heads}) * 2;
  const at::Tensor got = attend_cascade(q, k, v, attention_mask(own_pos, own_pos, own_valid, 0), pk, pv,
                                        prefix_groups(lengths, row_prefix, longest), scores, kernel);
  EXPECT_EQ(got.scalar_type(), dtype);

  // The same rows as one attention each over [its prefix slots, its own keys].
  const at::Tensor full_k = at::cat({pk.index_select(0, row_prefix), k}, 2).to(at::kFloat);
  const at::Tensor full_v = at::cat({pv.index_select(0, row_prefix), v}, 2).to(at::kFloat);
  const at::Tensor prefix_pos = at::arange(longest, at::kLong).expand({b, longest});
  const at::Tensor prefix_valid = prefix_pos < lengths.index_select(0, row_prefix).unsqueeze(1);
  const at::Tensor mask = attention_mask(own_pos, at::cat({prefix_pos, own_pos}, 1),
                                         at::cat({prefix_valid, own_valid}, 1), 0);
  const at::Tensor want = attend_reference(q.to(at::kFloat), full_k, full_v, mask, scores);
  return (got.to(at::kFloat) - want).abs().max().item<double>();
}

// Both kernels run on the CPU: the fused one the CPU takes, and the matmul one CUDA takes.
TEST_P(GroupedAttention, CascadeEqualsAttentionOverTheConcatenation) {
  for (const CascadeKernel kernel : {CascadeKernel::kFusedCpu, CascadeKernel::kMatmul}) {
    EXPECT_LT(cascade_error(GetParam(), kernel, at::kFloat), 1e-5);
    // bf16: the output's own rounding (values of order 1, 2^-8 apart) and the weights rounded before p·v;
    // measured at most 6.7e-3 (fused) and 8.2e-3 (matmul) over the three head layouts.
    EXPECT_LT(cascade_error(GetParam(), kernel, at::kBFloat16), 2e-2) << static_cast<int>(kernel);
    for (const RowLayout layout : {RowLayout::kInSlots, RowLayout::kOnePrefix})
      EXPECT_LT(cascade_error(GetParam(), kernel, at::kFloat, /*sinks=*/false, layout), 1e-5);
    for (const RowLayout layout : {RowLayout::kMixed, RowLayout::kInSlots, RowLayout::kOnePrefix})
      EXPECT_LT(cascade_error(GetParam(), kernel, at::kFloat, /*sinks=*/false, layout, /*token_major_q=*/true), 1e-5)
          << static_cast<int>(layout);
  }
}

// Attention sinks (gpt_oss): a logit per head in each softmax whose key has no value. The reference appends it as a
// key column; checked against that written out here, then attend (by the cascade's kernels) and cascade against it.
TEST_P(GroupedAttention, SinksJoinTheSoftmaxWithoutAValue) {
  const int64_t b = 2, heads = 4, kv_heads = GetParam(), t = 5, d = 8;
  at::manual_seed(4);
  const at::Tensor q = at::randn({b, heads, t, d}), k = at::randn({b, kv_heads, t, d}), v = at::randn({b, kv_heads, t, d});
  ScoreOptions scores;
  scores.sinks = at::randn({heads}) * 2;
  const at::Tensor kr = k.repeat_interleave(heads / kv_heads, 1), vr = v.repeat_interleave(heads / kv_heads, 1);
  const at::Tensor logits = (at::matmul(q, kr.transpose(-1, -2)) / std::sqrt(static_cast<double>(d)))
                                .masked_fill(at::ones({t, t}, at::kBool).tril().logical_not(), -1e30);
  const at::Tensor sink_column = scores.sinks.view({1, heads, 1, 1}).expand({b, heads, t, 1});
  const at::Tensor expected = at::matmul(at::softmax(at::cat({logits, sink_column}, -1), -1).narrow(-1, 0, t), vr);
  const at::Tensor plain = attend_reference(q, k, v, at::Tensor());
  EXPECT_TRUE(at::allclose(attend_reference(q, k, v, at::Tensor(), scores), expected, 1e-5, 1e-5));
  EXPECT_GT((plain - expected).abs().max().item<double>(), 1e-2);  // the sinks matter
  for (const bool matmul : {false, true}) {
    take_matmul_cascade_everywhere(matmul);
    EXPECT_TRUE(at::allclose(attend(q, k, v, at::Tensor(), scores), expected, 1e-5, 1e-5)) << matmul;
  }
  take_matmul_cascade_everywhere(false);
  for (const CascadeKernel kernel : {CascadeKernel::kFusedCpu, CascadeKernel::kMatmul})
    EXPECT_LT(cascade_error(kv_heads, kernel, at::kFloat, /*sinks=*/true), 1e-5) << static_cast<int>(kernel);
}

INSTANTIATE_TEST_SUITE_P(KvHeads, GroupedAttention, testing::Values(4, 2, 1));

TEST(Attention, MergeRejectsMismatchedParts) {
  const at::Tensor out = at::zeros({2, 3, 8}), lse = at::zeros({2, 3, 1});
  EXPECT_NO_THROW(merge_attention(out, lse, out, lse, at::kFloat));
  EXPECT_THROW(merge_attention(out, lse, at::zeros({2, 3, 9}), lse, at::kFloat), std::invalid_argument);
  EXPECT_THROW(merge_attention(out, lse, out, at::zeros({2, 3, 2}), at::kFloat), std::invalid_argument);
  EXPECT_THROW(merge_attention(out, lse, out.to(at::kBFloat16), lse, at::kFloat), std::invalid_argument);
}

}  // namespace
}  // namespace prefix_scorer::test
