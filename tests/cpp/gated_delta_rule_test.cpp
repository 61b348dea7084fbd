// The gated delta rule of Gated DeltaNet layers (a decay a head) and of Kimi Delta Attention (a decay a key channel),
// and their causal convolution: against transformers' own torch paths (tests/data/kernels/gated_delta_rule and
// kimi_delta_rule.safetensors, made by tests/make_references.py), and run in pieces, each from the state the piece
// before left, against the whole: what a shared prefix's cached state relies on.

#include "test_basics.h"

#include "model/checkpoint/safetensors.h"
#include "model/ops/gated_delta_rule.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace prefix_scorer::test {
namespace {

std::map<std::string, at::Tensor> references(const std::string& kernel = "gated_delta_rule") {
  const SafetensorsFile file(data_dir() + "/kernels/" + kernel + ".safetensors");
  std::map<std::string, at::Tensor> tensors;
  for (const auto& [name, info] : file.tensors()) tensors[name] = file.load(name);
  return tensors;
}

DeltaRuleInputs inputs_of(const std::map<std::string, at::Tensor>& r, int64_t from = 0, int64_t tokens = -1) {
  auto part = [&](const char* name) {
    const at::Tensor& t = r.at(name);
    return t.narrow(1, from, tokens < 0 ? t.size(1) - from : tokens);
  };
  return {part("query"), part("key"), part("value"), part("g"), part("beta")};
}

double max_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

// Each decay's rule: Gated DeltaNet's (one a head) and KDA's (one a key channel).
class DeltaRule : public ::testing::TestWithParam<std::string> {};

TEST_P(DeltaRule, ChunkedAndRecurrentFormsMatchTransformers) {
  const auto r = references(GetParam());
  const auto [from_zeros, zeros_final] = chunked_gated_delta_rule(inputs_of(r), at::Tensor());
  EXPECT_LT(max_diff(from_zeros, r.at("chunked_from_zeros")), 1e-5);
  EXPECT_LT(max_diff(zeros_final, r.at("chunked_from_zeros_final")), 1e-5);
  const auto [from_state, state_final] = chunked_gated_delta_rule(inputs_of(r), r.at("state"));
  EXPECT_LT(max_diff(from_state, r.at("chunked_from_state")), 1e-5);
  EXPECT_LT(max_diff(state_final, r.at("chunked_from_state_final")), 1e-5);
  const auto [stepped, stepped_final] = recurrent_gated_delta_rule(inputs_of(r, 0, 5), r.at("state"));
  EXPECT_LT(max_diff(stepped, r.at("recurrent_5")), 1e-5);
  EXPECT_LT(max_diff(stepped_final, r.at("recurrent_5_final")), 1e-5);
  // The state matters: from zeros and from a state the outputs differ well past the tolerance.
  EXPECT_GT(max_diff(from_zeros, from_state), 1e-2);
}

// A prefix's state, then its suffix from it: the whole sequence's outputs and state, wherever the split falls
// (inside a chunk, on its edge, past it), and the recurrent form stepping the same tokens gives the same.
TEST_P(DeltaRule, PiecesFromTheStateEqualTheWhole) {
  const auto r = references(GetParam());
  const auto [whole, whole_final] = chunked_gated_delta_rule(inputs_of(r), r.at("state"));
  for (const int64_t split : {1, 37, 64, 100, 149}) {
    const auto [head, head_final] = chunked_gated_delta_rule(inputs_of(r, 0, split), r.at("state"));
    const auto [tail, tail_final] = chunked_gated_delta_rule(inputs_of(r, split), head_final);
    EXPECT_LT(max_diff(at::cat({head, tail}, 1), whole), 1e-5) << split;
    EXPECT_LT(max_diff(tail_final, whole_final), 1e-5) << split;
    const auto [step, step_final] = recurrent_gated_delta_rule(inputs_of(r, split, 1), head_final);
    EXPECT_LT(max_diff(step, whole.narrow(1, split, 1)), 1e-5) << split;
  }
  const auto [stepped, stepped_final] = recurrent_gated_delta_rule(inputs_of(r), r.at("state"));
  EXPECT_LT(max_diff(stepped, whole), 1e-5);
  EXPECT_LT(max_diff(stepped_final, whole_final), 1e-5);
  // A state taken one token late is not the prefix's: the suffix's outputs move.
  const auto [late_head, late_final] = chunked_gated_delta_rule(inputs_of(r, 0, 38), r.at("state"));
  EXPECT_GT(max_diff(chunked_gated_delta_rule(inputs_of(r, 37), late_final).first, whole.narrow(1, 37, 113)), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Decays, DeltaRule, ::testing::Values("gated_delta_rule", "kimi_delta_rule"),
                         [](const auto& info) { return info.param; });

// KDA's decay is the per-head rule's where every key channel of a head decays alike.
TEST(GatedDeltaRule, ADecayPerChannelAllAlikeIsTheDecayPerHead) {
  const auto r = references();
  DeltaRuleInputs per_channel = inputs_of(r);
  per_channel.g = per_channel.g.unsqueeze(-1).expand({-1, -1, -1, per_channel.q.size(3)}).contiguous();
  const at::Tensor state = r.at("state");
  const auto [chunked, chunked_final] = chunked_gated_delta_rule(per_channel, state);
  EXPECT_LT(max_diff(chunked, r.at("chunked_from_state")), 1e-5);
  EXPECT_LT(max_diff(chunked_final, r.at("chunked_from_state_final")), 1e-5);
  const auto [stepped, stepped_final] = recurrent_gated_delta_rule(inputs_of(r, 0, 5), state);
  per_channel = inputs_of(r, 0, 5);
  per_channel.g = per_channel.g.unsqueeze(-1).expand({-1, -1, -1, per_channel.q.size(3)});
  EXPECT_LT(max_diff(recurrent_gated_delta_rule(per_channel, state).first, stepped), 1e-6);
}

TEST(GatedDeltaRule, ConvolutionContinuesFromItsHistory) {
  const auto r = references();
  const at::Tensor& x = r.at("conv_x");
  const auto [whole, whole_history] = causal_conv1d_silu(x, r.at("conv_weight"), at::Tensor());
  EXPECT_LT(max_diff(whole, r.at("conv_out")), 1e-5);
  for (const int64_t split : {1, 2, 17}) {  // shorter than the taps' history too
    const auto [head, head_history] = causal_conv1d_silu(x.narrow(2, 0, split), r.at("conv_weight"), at::Tensor());
    const auto [tail, tail_history] =
        causal_conv1d_silu(x.narrow(2, split, x.size(2) - split), r.at("conv_weight"), head_history);
    EXPECT_LT(max_diff(at::cat({head, tail}, 2), whole), 1e-6) << split;
    EXPECT_TRUE(at::equal(tail_history, whole_history)) << split;
  }
  EXPECT_TRUE(at::equal(whole_history, x.narrow(2, x.size(2) - 3, 3)));  // the last taps - 1 inputs
}

TEST(GatedDeltaRule, MismatchedShapesAreNamed) {
  const auto r = references();
  DeltaRuleInputs bad = inputs_of(r);
  bad.v = bad.v.narrow(2, 0, 3);  // 3 value heads over 2 key heads
  const std::string message = message_of<std::invalid_argument>([&] { chunked_gated_delta_rule(bad, at::Tensor()); });
  EXPECT_NE(message.find("v_heads a multiple of k_heads"), std::string::npos) << message;
  EXPECT_THROW(recurrent_gated_delta_rule(inputs_of(r), r.at("state").narrow(3, 0, 4)), std::invalid_argument);
  DeltaRuleInputs narrow_decay = inputs_of(r);  // a decay per channel of 5 channels for keys of 12
  narrow_decay.g = narrow_decay.g.unsqueeze(-1).expand({-1, -1, -1, 5});
  EXPECT_NE(message_of<std::invalid_argument>([&] { chunked_gated_delta_rule(narrow_decay, at::Tensor()); })
                .find("g [b, t, v_heads] or [b, t, v_heads, dk]"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] { chunked_gated_delta_rule(inputs_of(r), at::Tensor(), 0); })
                .find("chunk 0 must be positive"),
            std::string::npos);
}

}  // namespace
}  // namespace prefix_scorer::test
