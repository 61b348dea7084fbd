// The native model against the golden fixtures made with Hugging Face transformers (fp32, eager attention).

#include "model/config/model_config.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace prefix_scorer::test {
namespace {

class GoldenModel : public testing::TestWithParam<std::string> {};

TEST_P(GoldenModel, FullLogitsMatchTransformers) {
  const Model model = Model::load(model_dir(GetParam()));
  const SafetensorsFile expected(model_dir(GetParam()) + "/expected_logits.safetensors");
  for (int i = 0; expected.contains("tokens_" + std::to_string(i)); ++i) {
    const at::Tensor tokens = expected.load("tokens_" + std::to_string(i));
    const at::Tensor logits = expected.load("logits_" + std::to_string(i));
    const TokenIds ids(tokens.data_ptr<int64_t>(), tokens.data_ptr<int64_t>() + tokens.numel());
    // Log-softmax is a per-row shift of the logits: compare both the shift-free logits and the argmax.
    const at::Tensor ours = full_logprobs(model, ids);
    const at::Tensor theirs = at::log_softmax(logits, -1);
    EXPECT_LT((ours - theirs).abs().max().item<double>(), 1e-4) << "sequence " << i;
    EXPECT_TRUE(at::equal(ours.argmax(-1), logits.argmax(-1))) << "sequence " << i;
  }
}

TEST_P(GoldenModel, LoglikelihoodMatchesTransformers) {
  const Model model = Model::load(model_dir(GetParam()));
  const auto expected = expected_scores(GetParam());
  std::vector<Request> requests;
  for (const auto& row : expected) requests.push_back(row.request);
  const ScoringResult result = score_plain(model, requests);
  ASSERT_EQ(result.scores.size(), expected.size());
  int64_t greedy = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(result.scores[i].logprob, expected[i].logprob, 1e-4) << "request " << i;
    EXPECT_EQ(result.scores[i].is_greedy, expected[i].is_greedy) << "request " << i;
    greedy += expected[i].is_greedy ? 1 : 0;
  }
  // The fixture checks is_greedy both ways: its greedy rows (1 and 3 tokens) and the rest.
  EXPECT_GE(greedy, 2);
  EXPECT_LT(greedy, static_cast<int64_t>(expected.size()));
}

TEST_P(GoldenModel, GreedyContinuationIsReportedGreedy) {
  // One token after a fixture context: the argmax is greedy, the next id is not.
  const Model model = Model::load(model_dir(GetParam()));
  const TokenIds context = expected_scores(GetParam()).front().request.context;
  const at::Tensor last = full_logprobs(model, context)[-1];
  const int64_t best = last.argmax().item<int64_t>();
  const int64_t other = (best + 1) % model.config().vocab_size;
  const ScoringResult result = score_plain(model, {{context, {best}}, {context, {other}}});
  EXPECT_TRUE(result.scores[0].is_greedy);
  EXPECT_FALSE(result.scores[1].is_greedy);
  EXPECT_NEAR(result.scores[0].logprob, last[best].item<double>(), 1e-6);
  EXPECT_NEAR(result.scores[1].logprob, last[other].item<double>(), 1e-6);
}

// Every model_type the engine serves natively has a golden fixture (as its own type, or as its wrapper's text
// model), but Kimi K2's, which is DeepSeek V3's config under another name, and the llama4 wrapper's: transformers
// 5.24's Llama4ForConditionalGeneration cannot run (its forward reads image_outputs off its text model's output),
// so test_references.py saves the llama4_text fixture inside it at test time and checks that fixture's numbers.
TEST(GoldenFixtures, EverySupportedModelTypeHasOne) {
  std::set<std::string> fixtures;
  for (const auto* names : {&fixture_models(), &recurrent_fixture_models()}) {
    for (const std::string& name : *names) {
      const std::vector<std::string> types = fixture_model_types(name);
      fixtures.insert(types.begin(), types.end());
    }
  }
  for (const std::string& type : supported_model_types())
    if (type != "kimi_k2" && type != "llama4") EXPECT_EQ(fixtures.count(type), 1u) << type << " has no fixture under tests/data/models";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenModel, testing::ValuesIn(fixture_models()),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(RecurrentFixtures, GoldenModel, testing::ValuesIn(recurrent_fixture_models()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace prefix_scorer::test
