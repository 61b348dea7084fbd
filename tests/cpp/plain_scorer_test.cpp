// The plain scoring path: lm-eval truncation, batching invariance, synthetic models, and bad input.

#include "model/config/model_config.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <numeric>

namespace prefix_scorer::test {
namespace {

TEST(PlainScorer, BatchingDoesNotChangeScores) {
  const Model model = Model::load(model_dir("qwen3"));
  const auto requests = fixture_requests("qwen3");
  const ScoringResult together = score_plain(model, requests);
  ScoringOptions one_by_one;
  one_by_one.max_batch_rows = 1;
  const ScoringResult alone = score_plain(model, requests, one_by_one);
  EXPECT_EQ(together.stats.forwards, 1);
  EXPECT_EQ(alone.stats.forwards, static_cast<int64_t>(requests.size()));
  EXPECT_GT(together.stats.padding_tokens, 0);
  EXPECT_EQ(alone.stats.padding_tokens, 0);
  expect_same_scores(together.scores, alone.scores, "batched vs one by one");
}

TEST(PlainScorer, TruncatesLikeLmEval) {
  // lm-eval keeps (context + continuation)[-(max_length + 1):] and does not feed the last token.
  const Model model = Model::load(model_dir("llama3"));
  const Request request = fixture_requests("llama3")[2];  // 11 context + 5 continuation tokens
  ScoringOptions options;
  options.max_length = 8;
  const ScoringResult result = score_plain(model, {request}, options);
  EXPECT_EQ(result.stats.truncated, 1);

  TokenIds all = request.context;
  all.insert(all.end(), request.continuation.begin(), request.continuation.end());
  const TokenIds window(all.end() - 9, all.end() - 1);
  const at::Tensor logprobs = full_logprobs(model, window);
  double expected = 0.0;
  for (size_t j = 0; j < request.continuation.size(); ++j)
    expected += logprobs[3 + j][request.continuation[j]].item<double>();
  EXPECT_NEAR(result.scores[0].logprob, expected, 1e-5);
  EXPECT_GT(std::abs(result.scores[0].logprob - score_plain(model, {request}).scores[0].logprob), 1e-3);

  options.max_length = 4;
  EXPECT_NE(message_of<std::invalid_argument>([&] { score_plain(model, {request}, options); }).find("request 0"),
            std::string::npos);
}

TEST(PlainScorer, BadRequestsNameTheirIndex) {
  const Model model = Model::load(model_dir("llama3"));
  const Request good{{1, 2, 3}, {4}};
  auto error_for = [&](const Request& bad) {
    return message_of<std::invalid_argument>([&] { score_plain(model, {good, good, bad}); });
  };
  EXPECT_NE(error_for({{1, 2}, {}}).find("request 2: empty continuation"), std::string::npos);
  EXPECT_NE(error_for({{}, {5}}).find("request 2: empty context"), std::string::npos);
  EXPECT_NE(error_for({{1, 512}, {5}}).find("request 2: context token 1 is id 512"), std::string::npos);
  EXPECT_NE(error_for({{1}, {5, -1}}).find("request 2: continuation token 1 is id -1"), std::string::npos);
}

TEST(PlainScorer, AbsurdOptionsAreRejected) {
  const Model model = Model::load(model_dir("llama3"));
  const std::vector<Request> requests{{{1, 2, 3}, {4}}};
  for (auto set : std::vector<void (*)(ScoringOptions&)>{
           [](ScoringOptions& o) { o.max_length = -1; }, [](ScoringOptions& o) { o.max_batch_tokens = 0; },
           [](ScoringOptions& o) { o.max_batch_rows = -3; }, [](ScoringOptions& o) { o.max_length = int64_t{1} << 40; }}) {
    ScoringOptions options;
    set(options);
    EXPECT_THROW(score_plain(model, requests, options), std::invalid_argument);
  }
  EXPECT_TRUE(score_plain(model, {}).scores.empty());
}

TEST(PlainScorer, SyntheticModelIsDeterministicPerSeed) {
  ModelOptions options;
  options.seed = 7;
  const Model a = Model::open("synthetic:tiny", options), b = Model::open("synthetic:tiny", options);
  options.seed = 8;
  const Model c = Model::open("synthetic:tiny", options);
  const std::vector<Request> requests{{{10, 20, 30, 40}, {50, 60}}, {{11}, {12}}};
  const auto sa = score_plain(a, requests).scores, sb = score_plain(b, requests).scores;
  const auto sc = score_plain(c, requests).scores;
  EXPECT_EQ(sa[0].logprob, sb[0].logprob);
  EXPECT_NE(sa[0].logprob, sc[0].logprob);
  EXPECT_EQ(a.config().vocab_size, 2048);
  EXPECT_THROW(Model::open("synthetic:nope"), std::invalid_argument);
}

class Bfloat16 : public testing::TestWithParam<std::string> {};

TEST_P(Bfloat16, AgreesWithFloat32WithinItsRounding) {
  ModelOptions bf16;
  bf16.dtype = "bfloat16";
  expect_bfloat16_agrees_with_fixture(Model::load(model_dir(GetParam()), bf16), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Bfloat16, testing::ValuesIn(fixture_models()),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(RecurrentFixtures, Bfloat16, testing::ValuesIn(recurrent_fixture_models()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace prefix_scorer::test
