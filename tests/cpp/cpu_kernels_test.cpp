// The fused CPU loops (src/model/cpu/) against the ATen ops they replace: the rotary embedding bitwise, in every
// dtype and layout the layers hand it; the attention merge, by slots or by rows, against merge_attention_reference;
// linear's oneDNN matmul against at::linear in double; a decode step's attention against softmax attention in
// double; the one-pass dequantizations of 4-bit codes and of FP8 blocks bitwise against the ATen ops.

#include "model/ops/decode_attention.h"
#include "model/ops/fp8_weight.h"
#include "model/ops/integer_weight.h"
#include "model/ops/linear.h"
#include "model/ops/merge_attention.h"
#include "model/ops/quantized_experts.h"
#include "model/ops/rope.h"
#include "test_support.h"

#include <gtest/gtest.h>

namespace prefix_scorer::test {
namespace {

// apply_rotary as ATen ops: x * cos + roll(x, rotary / 2) * sin_signed over the first rotary dimensions.
at::Tensor rotary_by_ops(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t rotary = cos.size(-1);
  const at::Tensor part = x.narrow(-1, 0, rotary);
  const at::Tensor turned = part * cos + at::roll(part, rotary / 2, -1) * sin;
  return rotary == x.size(-1) ? turned : at::cat({turned, x.narrow(-1, rotary, x.size(-1) - rotary)}, -1);
}

class FusedRotary : public testing::TestWithParam<at::ScalarType> {};

TEST_P(FusedRotary, IsBitwiseTheOpsOnEveryLayout) {
  const at::ScalarType dtype = GetParam();
  const int64_t b = 3, t = 5, heads = 4, kv_heads = 2, dim = 16;
  at::manual_seed(7);
  // q and k as the stacked projection leaves them: head-major views of token-major memory, v's heads beside them
  const at::Tensor qkv = at::randn({b, t, (heads + 2 * kv_heads) * dim}).to(dtype);
  const at::Tensor by_head = qkv.view({b, t, heads + 2 * kv_heads, dim}).transpose(1, 2).narrow(1, 0, heads + kv_heads);
  const at::Tensor positions = at::randint(0, 50, {b, t}, at::kLong);
  for (const int64_t rotary : {dim, dim / 2}) {
    RopeConfig rope;
    const RotaryTables tables = rotary_tables(inverse_frequencies(rope, rotary), positions, dtype);
    SCOPED_TRACE(rotary);
    ASSERT_TRUE(cpu::can_rotate(by_head, tables.cos_by_head, tables.sin_by_head));
    const at::Tensor fused = apply_rotary(by_head, tables, /*head_major=*/true);
    EXPECT_TRUE(at::equal(fused, rotary_by_ops(by_head, tables.cos_by_head, tables.sin_by_head)));
    EXPECT_EQ(fused.stride(2), (heads + kv_heads) * dim);  // token-major still: a row's heads side by side
    // token-major x [b, t, heads, dim], and one table for every row (broadcast over the batch)
    const at::Tensor x = at::randn({b, t, heads, dim}).to(dtype);
    const RotaryTables shared = rotary_tables(inverse_frequencies(rope, rotary), positions.narrow(0, 0, 1), dtype);
    EXPECT_TRUE(at::equal(apply_rotary(x, shared), rotary_by_ops(x, shared.cos, shared.sin_signed)));
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, FusedRotary, testing::Values(at::kFloat, at::kBFloat16, at::kHalf));

class OnePassDequantization : public testing::TestWithParam<at::ScalarType> {};

// Shapes the blocks and groups do not tile (a partial last block; an odd group start), and a stack of experts.
TEST_P(OnePassDequantization, IsBitwiseTheOps) {
  const at::ScalarType dtype = GetParam();
  at::manual_seed(11);
  const at::Tensor experts = at::randn({3, 40, 72}) * 0.05;
  const at::Tensor scales = at::rand({3, 5, 5}) + 0.01;  // blocks of 8 x 16: the last column block partial
  const at::Tensor values = (experts / 0.002).clamp(-448, 448).to(at::kFloat8_e4m3fn);
  const at::Tensor by_ops = (values.to(at::kFloat) * scales.repeat_interleave(8, 1).narrow(1, 0, 40)
                                                         .repeat_interleave(16, 2).narrow(2, 0, 72)).to(dtype);
  EXPECT_TRUE(at::equal(cpu::dequantize_fp8(values, scales, {8, 16}, dtype), by_ops));
  EXPECT_TRUE(at::equal(dequantize_blocks(values, scales, {8, 16}, dtype), by_ops));

  const IntegerGroups groups = quantize_symmetric(at::randn({24, 99 - 3}), 32, 4);  // 96 inputs: 3 groups of 32
  IntegerWeight w = *integer_weight(groups, at::kFloat, c10::kCPU);
  EXPECT_TRUE(at::equal(cpu::dequantize_integer(w, dtype), dequantize(groups).to(dtype)));

  // 8-bit codes, one a byte, with zero points of their own (asymmetric): the loop and, in fp64, the ATen ops
  const IntegerGroups bytes{at::randint(0, 256, {24, 72}, at::kInt), at::randint(0, 256, {24, 3}, at::kInt),
                            at::rand({24, 3}) + 0.01, at::arange(72, at::kLong).div(24, "floor"), 8};
  const IntegerWeight w8 = *integer_weight(bytes, at::kFloat, c10::kCPU);
  ASSERT_EQ(w8.codes.numel(), 24 * 72);  // one byte a code
  EXPECT_TRUE(at::equal(cpu::dequantize_integer(w8, dtype), dequantize(bytes).to(dtype)));
  EXPECT_TRUE(at::equal(dequantize(w8, at::kDouble), dequantize(bytes).to(at::kDouble)));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, OnePassDequantization, testing::Values(at::kFloat, at::kBFloat16, at::kHalf));

// 8-bit codes with one scale a channel run in ATen's int8 matmul with bf16 activations; groups within a channel, and
// fp32 activations, are dequantized instead.
TEST(IntegerKernels, EightBitCodesPerChannelRunInAtensInt8Matmul) {
  at::manual_seed(5);
  const IntegerGroups g = quantize_symmetric(at::randn({32, 64}), 64, 8);
  const IntegerWeight w = *integer_weight(g, at::kBFloat16, c10::kCPU);
  ASSERT_TRUE(w.kernel_codes.defined());
  EXPECT_EQ(w.kernel_codes.scalar_type(), at::kChar);
  const at::Tensor x = at::randn({3, 2, 64}).to(at::kBFloat16);
  const at::Tensor want = at::linear(x.to(at::kFloat), dequantize(g));
  const at::Tensor got = kernel_product(x, w);
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(at::allclose(got.to(at::kFloat), want, 2e-2, 5e-2)) << (got.to(at::kFloat) - want).abs().max();
  EXPECT_THROW(one_expert(w), std::invalid_argument);  // experts keep codes as bytes, not in a kernel's form
  EXPECT_FALSE(integer_weight(quantize_symmetric(at::randn({32, 64}), 32, 8), at::kBFloat16, c10::kCPU)
                   ->kernel_codes.defined());
  EXPECT_FALSE(integer_weight(g, at::kFloat, c10::kCPU)->kernel_codes.defined());
}

// Experts' codes stacked as stored: an act-order expert (its inputs sorted by group at load) beside one in order and
// one of 8 bits; each routed expert dequantizes to its weight with its columns back in the inputs' order.
TEST(IntegerKernels, ExpertStacksMixInOrderAndActOrderExperts) {
  at::manual_seed(9);
  const int64_t out = 8, in = 64;
  IntegerGroups in_order = quantize_symmetric(at::randn({out, in}), 32, 4);
  IntegerGroups act_order = quantize_symmetric(at::randn({out, in}), 32, 4);
  act_order.g_idx = at::randperm(in, at::kLong).div(32, "floor");  // each group's inputs scattered
  const IntegerWeight first = *integer_weight(in_order, at::kFloat, c10::kCPU);
  const IntegerWeight second = *integer_weight(act_order, at::kFloat, c10::kCPU);
  ASSERT_FALSE(first.input_order.defined());
  ASSERT_TRUE(second.input_order.defined());
  QuantizedExperts stack = empty_experts(one_expert(first), 3, c10::kCPU);
  set_expert(stack, 0, one_expert(first));
  set_expert(stack, 1, one_expert(second));
  set_expert(stack, 2, one_expert(first));
  const at::Tensor got = dequantize_experts(stack, at::tensor({1, 0, 2}, at::kLong), at::kFloat);
  EXPECT_TRUE(at::equal(got[0], dequantize(act_order)));
  EXPECT_TRUE(at::equal(got[1], dequantize(in_order)));
  EXPECT_TRUE(at::equal(got[2], dequantize(in_order)));

  const IntegerGroups bytes = quantize_symmetric(at::randn({out, in}), 32, 8);
  const QuantizedExperts eight = one_expert(*integer_weight(bytes, at::kFloat, c10::kCPU));
  EXPECT_TRUE(at::equal(dequantize_one(eight, at::kFloat), dequantize(bytes)));
  EXPECT_THROW(set_expert(stack, 0, eight), std::invalid_argument);  // another width
}

TEST(FusedRotary, LeavesWhatItCannotTakeToTheOps) {
  const at::Tensor x = at::randn({2, 3, 4, 8});
  const at::Tensor cos = at::randn({2, 3, 1, 8}), sin = at::randn({2, 3, 1, 8});
  EXPECT_TRUE(cpu::can_rotate(x, cos, sin));
  EXPECT_FALSE(cpu::can_rotate(x, cos.to(at::kBFloat16), sin));     // another dtype
  EXPECT_FALSE(cpu::can_rotate(x.transpose(2, 3), cos, sin));      // the head dimension strided
  EXPECT_FALSE(cpu::can_rotate(x, at::randn({2, 3, 1, 10}), sin));  // wider than the head
}

// Parts a by slots ([slots, h, q, dim]) and b by rows, merged where slot_of_row sends each row.
TEST(FusedMerge, ReadsEachRowsSlotAndMatchesTheReference) {
  const int64_t slots = 6, rows = 4, h = 3, q = 5, dim = 8;
  at::manual_seed(11);
  const at::Tensor out_a = at::randn({slots, h, q, dim}), lse_a = at::randn({slots, h, q}) * 4;
  const at::Tensor out_b = at::randn({rows, h, q, dim}), lse_b = at::randn({rows, h, q}) * 4;
  const at::Tensor slot_of_row = at::tensor({5, 0, 3, 3}, at::kLong);
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    const at::Tensor merged = merge_attention_rows(out_a, lse_a, out_b, lse_b, dtype, slot_of_row);
    const at::Tensor expected = merge_attention_reference(out_a.index_select(0, slot_of_row),
                                                          lse_a.index_select(0, slot_of_row).unsqueeze(-1), out_b,
                                                          lse_b.unsqueeze(-1), dtype);
    EXPECT_EQ(merged.scalar_type(), dtype);
    EXPECT_TRUE(at::allclose(merged.to(at::kFloat), expected.to(at::kFloat), 1e-5, dtype == at::kFloat ? 1e-6 : 1e-2));
    EXPECT_EQ(merged.stride(2), h * dim);  // token-major, as attention kernels leave outputs
  }
  // without a map, row r is slot r
  const at::Tensor first = out_a.narrow(0, 0, rows), first_lse = lse_a.narrow(0, 0, rows);
  EXPECT_TRUE(at::allclose(merge_attention_rows(first, first_lse, out_b, lse_b, at::kFloat),
                           merge_attention_reference(first, first_lse.unsqueeze(-1), out_b, lse_b.unsqueeze(-1), at::kFloat),
                           1e-5, 1e-6));
}

// attend_decode against softmax attention taken in double, on what a decode step hands it: grouped query heads, keys
// narrower than a vector register's multiple (20) and values of another width, keys over several blocks of the online
// softmax, q token-major and the cache [b, slots, kv_heads, dim] with room past its keys, a row whose last keys are
// invisible, a query that sees no key.
TEST(DecodeAttention, MatchesSoftmaxAttentionInDouble) {
  const int64_t b = 3, heads = 6, kv_heads = 2, queries = 2, dim = 20, v_dim = 12, keys = 300, slots = 340;
  at::manual_seed(17);
  const at::Tensor q = at::randn({b, queries, heads, dim}).transpose(1, 2);
  const at::Tensor k = (at::randn({b, slots, kv_heads, dim}) * 2).transpose(1, 2).narrow(2, 0, keys);
  const at::Tensor v = at::randn({b, slots, kv_heads, v_dim}).transpose(1, 2).narrow(2, 0, keys);
  at::Tensor visible = at::rand({b, 1, queries, keys}) < 0.8;
  visible[1].narrow(2, 180, keys - 180).fill_(false);
  visible[2][0][1].fill_(false);
  const double scale = 0.4;
  ASSERT_TRUE(cpu::can_attend_decode(q, k, v, visible));
  const auto [out, lse] = cpu::attend_decode(q, k, v, visible, scale);

  const int64_t group = heads / kv_heads;
  at::Tensor scores = at::matmul(q.to(at::kDouble), k.to(at::kDouble).repeat_interleave(group, 1).transpose(-1, -2)) * scale;
  scores.masked_fill_(visible.logical_not(), -std::numeric_limits<double>::infinity());
  const at::Tensor seen = visible.any(-1).expand({b, heads, queries});  // the query of row 2 sees nothing
  const at::Tensor want_lse = at::where(seen, at::logsumexp(scores, -1), static_cast<double>(cpu::kNoKeyLse));
  const at::Tensor weights = at::softmax(scores, -1).nan_to_num(0.0);
  const at::Tensor want = at::matmul(weights, v.to(at::kDouble).repeat_interleave(group, 1));
  EXPECT_TRUE(at::allclose(out.to(at::kDouble), want, 1e-5, 1e-6)) << (out - want).abs().max();
  EXPECT_TRUE(at::allclose(lse.to(at::kDouble), want_lse, 1e-6, 1e-5)) << (lse - want_lse).abs().max();
  EXPECT_EQ(out.stride(2), heads * v_dim);  // token-major, as the flash kernel leaves it
  // one mask row for every query (a prefix's slots): broadcast over the queries
  const at::Tensor slot_valid = visible.narrow(2, 0, 1);
  const at::Tensor broadcast = std::get<0>(cpu::attend_decode(q, k, v, slot_valid, scale));
  EXPECT_TRUE(at::allclose(broadcast, std::get<0>(cpu::attend_decode(q, k, v, slot_valid.expand_as(visible).clone(), scale))));
}

TEST(DecodeAttention, LeavesWhatItCannotTakeToTheFlashKernel) {
  const at::Tensor q = at::randn({2, 4, 1, 8}), k = at::randn({2, 2, 5, 8}), v = at::randn({2, 2, 5, 8});
  const at::Tensor visible = at::ones({2, 1, 1, 5}, at::kBool);
  EXPECT_TRUE(cpu::can_attend_decode(q, k, v, visible));
  EXPECT_FALSE(cpu::can_attend_decode(q.to(at::kBFloat16), k, v, visible));                       // another dtype
  EXPECT_FALSE(cpu::can_attend_decode(at::randn({2, 4, cpu::kMostDecodeQueries + 1, 8}), k, v,   // a prefill's queries
                                      visible));
  EXPECT_FALSE(cpu::can_attend_decode(q, k.transpose(2, 3).contiguous().transpose(2, 3), v, visible));  // dim strided
  EXPECT_FALSE(cpu::can_attend_decode(q, k, v, at::zeros({2, 1, 1, 5})));                         // not a bool mask
  EXPECT_FALSE(cpu::can_attend_decode(at::randn({2, 3, 1, 8}), k, v, visible));                   // 3 heads over 2
}

// fp32 on the CPU through oneDNN wherever this torch has it: within rounding of at::linear taken in double, for
// every operand form the layers hand it (a decode step's one row, token-major 3-D input with a bias, a transposed
// input, a strided weight view, no rows).
TEST(OnednnLinear, MatchesAtenLinearInEveryOperandForm) {
  at::manual_seed(5);
  const at::Tensor weight = at::randn({96, 40}), bias = at::randn({96});
  const at::Tensor strided = at::randn({192, 40}).slice(0, 0, 192, 2);
  struct Case {
    const char* name;
    at::Tensor x, weight, bias;
  };
  const std::vector<Case> cases = {{"one row", at::randn({1, 40}), weight, {}},
                                   {"3-D with bias", at::randn({3, 7, 40}), weight, bias},
                                   {"transposed input", at::randn({40, 9}).t(), weight, {}},
                                   {"strided weight", at::randn({5, 40}), strided, bias},
                                   {"no rows", at::randn({0, 40}), weight, bias}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(linear_by_onednn(c.x, c.weight), at::hasMKLDNN());
    const at::Tensor got = linear(c.x, {c.weight, c.bias});
    const at::Tensor want = at::linear(c.x.to(at::kDouble), c.weight.to(at::kDouble),
                                       c.bias.defined() ? std::optional<at::Tensor>(c.bias.to(at::kDouble)) : std::nullopt);
    ASSERT_EQ(got.sizes(), want.sizes());
    EXPECT_EQ(got.scalar_type(), at::kFloat);
    EXPECT_TRUE(at::allclose(got.to(at::kDouble), want, 1e-5, 1e-5));
  }
}

TEST(OnednnLinear, LeavesOtherDtypesToAtenBitwise) {
  at::manual_seed(6);
  for (const at::ScalarType dtype : {at::kBFloat16, at::kHalf, at::kDouble}) {
    const at::Tensor x = at::randn({4, 40}).to(dtype), weight = at::randn({24, 40}).to(dtype);
    EXPECT_FALSE(linear_by_onednn(x, weight));
    EXPECT_TRUE(at::equal(linear(x, {weight, {}}), at::linear(x, weight)));
  }
}

}  // namespace
}  // namespace prefix_scorer::test
