// What the engine keeps of a recurrent layer (Gated DeltaNet): a state and a convolution history per row, taken at
// its last real token. The fixture suites (golden, cached forwards, prefix against plain, generation) run the
// recurrent fixtures on every path; here: what only such a model has.

#include "model/config/layer_spec.h"
#include "model/config/model_config.h"
#include "model/fault_injection.h"
#include "model/forward_batch.h"
#include "model/layers/mixer.h"
#include "scoring/prefix_kv.h"
#include "test_support.h"

#include <gtest/gtest.h>

namespace prefix_scorer::test {
namespace {

std::shared_ptr<const Model> qwen3_5() {
  return std::make_shared<const Model>(Model::load(model_dir("qwen3_5_text")));
}

// Three shared prefixes of different lengths (a wave of them is padded), each with questions of different lengths
// (their batches are padded) and four one-token choices. Lengths close enough that padding stays under an eighth
// of a forward, so that rows of different lengths share forwards.
std::vector<Request> uneven_workload() {
  std::vector<Request> requests;
  int64_t next = 10;
  for (const int prefix_len : {15, 16, 17}) {
    TokenIds prefix;
    for (int i = 0; i < prefix_len; ++i) prefix.push_back(next++ % 480 + 10);
    for (int q = 0; q < 3; ++q) {
      TokenIds context = prefix;
      for (int i = 0; i < 8 + q; ++i) context.push_back(next++ % 480 + 10);
      for (int64_t choice = 1; choice <= 4; ++choice) requests.push_back({context, {choice}});
    }
  }
  return requests;
}

// A state runs along a whole row: a packed batch (several sequences in a row) and a row with padding before a real
// token are refused by name; the scorer never builds them for such a model (packing asked for is not taken).
TEST(RecurrentState, RowsTheStateCannotRunAlongAreRefused) {
  const auto model = qwen3_5();
  PackedRow two;
  for (int64_t i = 0; i < 4; ++i) {
    two.tokens.push_back(5 + i);
    two.positions.push_back(i % 2);
    two.segment.push_back(i / 2);
    two.branch.push_back(0);
  }
  std::string message = message_of<std::invalid_argument>([&] {
    model->forward(make_packed_batch({two}), nullptr, at::zeros({1}, at::kLong));
  });
  EXPECT_NE(message.find("qwen3_5_text's recurrent layers take one sequence a row"), std::string::npos) << message;
  const TokenIds row{5, 6, 7};
  ForwardBatch left_padded = make_batch({&row}, {0});
  left_padded.valid[0][0] = false;
  message = message_of<std::invalid_argument>([&] { model->forward(left_padded, nullptr, at::ones({1}, at::kLong)); });
  EXPECT_NE(message.find("need each row's padding at its end"), std::string::npos) << message;

  PrefixScorerOptions packing;  // trees and shared rows asked for
  packing.min_prefix_len = 2;
  const std::vector<Request> requests = uneven_workload();
  const ScoringResult result = PrefixScorer(model, packing).loglikelihood(requests);
  EXPECT_EQ(result.stats.trees_packed, 0);
  EXPECT_EQ(result.stats.rows_shared, 0);
  expect_same_scores(result.scores, score_plain(*model, requests).scores, "packing asked for");
}

class BrokenSnapshot : public ::testing::TestWithParam<std::string> {};

// Breaking the snapshot on purpose (the state taken one token late, or the padding let in) breaks the prefix path's
// numbers: the comparison against the plain path catches either on every recurrent fixture, a Gated DeltaNet's state
// and a short convolution's history alike.
TEST_P(BrokenSnapshot, IsCaught) {
  const auto model = std::make_shared<const Model>(Model::load(model_dir(GetParam())));
  const std::vector<Request> requests = uneven_workload();
  const std::vector<Score> plain = score_plain(*model, requests).scores;
  PrefixScorerOptions options;
  options.min_prefix_len = 2;
  options.prefill_batch = 4;  // the three prefixes in one padded wave
  for (const auto fault : {testing::StateFault::kOneTokenLate, testing::StateFault::kPaddingLetIn}) {
    testing::break_state_snapshot(fault);
    const ScoringResult broken = PrefixScorer(model, options).loglikelihood(requests);
    testing::break_state_snapshot(testing::StateFault::kNone);
    double worst = 0;
    for (size_t i = 0; i < plain.size(); ++i)
      worst = std::max(worst, std::abs(broken.scores[i].logprob - plain[i].logprob));
    EXPECT_GT(worst, 1e-3) << "fault " << static_cast<int>(fault);
  }
  const ScoringResult sound = PrefixScorer(model, options).loglikelihood(requests);
  expect_same_scores(sound.scores, plain, "the snapshot as it should be");
  EXPECT_EQ(sound.stats.prefixes_prefilled, 3);
  EXPECT_GT(sound.stats.prefill_padding, 0);  // there was padding to let in
  EXPECT_GT(sound.stats.suffix_padding, 0);
}

INSTANTIATE_TEST_SUITE_P(Recurrent, BrokenSnapshot, ::testing::ValuesIn(recurrent_fixture_models()),
                         [](const auto& info) { return info.param; });

// A cached prefix entry holds its tokens' keys and values in the attention layer and a state of fixed size in each
// recurrent one; both count in its bytes, and the cache holds what it says.
TEST(RecurrentState, EntriesCountTheirStateBytes) {
  const auto model = qwen3_5();
  const ModelSpec& spec = model->spec();
  // 3 Gated DeltaNet layers: a [4 value heads, 12, 10] fp32 state and a [2 * 24 + 40 channels, 3 taps] history.
  EXPECT_EQ(state_bytes(*model), 3 * (4 * 4 * 12 * 10 + 4 * (2 * 24 + 40) * 3));
  EXPECT_EQ(mixer_costs(spec, 1, 4).state_bytes, 0);  // the attention layer
  PrefixScorerOptions options;
  options.min_prefix_len = 2;
  options.keep_cache = true;
  options.tree_max_branches = 0;
  PrefixScorer scorer(model, options);
  scorer.loglikelihood(uneven_workload());
  EXPECT_EQ(scorer.stats().entries_held, 3);
  EXPECT_EQ(scorer.stats().bytes_held, kv_bytes(*model, 15 + 16 + 17) + 3 * state_bytes(*model));
}

}  // namespace
}  // namespace prefix_scorer::test
