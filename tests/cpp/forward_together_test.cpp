// Forwards that run only their real tokens through the token-wise ops: a batch that is mostly padding gives each
// row's own numbers, and batches run together (Model::forward_together, a decode step and a prefill) give each
// part's own forward's numbers and leave its cache as its own forward would.

#include "model/cache/kv_cache.h"
#include "model/config/model_config.h"
#include "model/forward_batch.h"
#include "model/layers/mixer.h"
#include "scoring/batching.h"
#include "scoring/prefix_kv.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <random>

namespace prefix_scorer::test {
namespace {

// The flat positions of each row's last token in make_batch's layout.
at::Tensor last_positions(const std::vector<TokenIds>& rows, int64_t width) {
  std::vector<int64_t> last;
  for (size_t i = 0; i < rows.size(); ++i)
    last.push_back(static_cast<int64_t>(i) * width + static_cast<int64_t>(rows[i].size()) - 1);
  return at::tensor(last, at::kLong);
}

std::vector<const TokenIds*> pointers(const std::vector<TokenIds>& rows) {
  std::vector<const TokenIds*> out;
  for (const TokenIds& r : rows) out.push_back(&r);
  return out;
}

// The parts of one test: a decode step of rows running over their own cache, and a prefill of tails after a
// shared prefix (by cascade where the model allows it, else gathered into the rows' own cache).
struct Parts {
  std::vector<TokenIds> prompts, steps, tails;
  EntryPtr prefix;
  KvCache running, joining;
  std::optional<SharedPrefixes> shared;
  ForwardBatch step_batch, tail_batch;
  at::Tensor step_scored, tail_scored;

  Parts(const Model& model, uint32_t seed)
      : running(model.config().num_layers), joining(model.config().num_layers) {
    std::mt19937 rng(seed);
    prompts = {random_tokens(rng, 7), random_tokens(rng, 3), random_tokens(rng, 5)};
    steps = {random_tokens(rng, 1), random_tokens(rng, 4), random_tokens(rng, 2)};  // a token and drafts
    tails = {random_tokens(rng, 9), random_tokens(rng, 2)};
    prefix = prefilled(model, random_tokens(rng, 6));
    std::vector<int64_t> zeros(prompts.size(), 0), starts, after_prefix(tails.size(), 6);
    model.forward(make_batch(pointers(prompts), zeros), &running, at::zeros({0}, at::kLong));
    for (const TokenIds& p : prompts) starts.push_back(static_cast<int64_t>(p.size()));
    step_batch = make_batch(pointers(steps), starts);
    step_scored = last_positions(steps, step_batch.tokens.size(1));
    tail_batch = make_batch(pointers(tails), after_prefix);
    tail_scored = last_positions(tails, tail_batch.tokens.size(1));
    const std::vector<const PrefixEntry*> entries(tails.size(), prefix.get());
    if (cascade_exact(model.spec()))
      shared = distinct_prefix_kv(model, entries);
    else
      joining = gather_prefix_kv(model, entries);
  }

  ForwardPart step() { return {&step_batch, &running, step_scored, nullptr}; }
  ForwardPart prefill() { return {&tail_batch, &joining, tail_scored, shared ? &*shared : nullptr}; }
};

// Each row's next log-probabilities after one more token over `cache` (the same token for every row).
at::Tensor next_after(const Model& model, KvCache& cache, const std::vector<int64_t>& positions) {
  const std::vector<TokenIds> one(positions.size(), TokenIds{17});
  return model.forward(make_batch(pointers(one), positions), &cache, at::arange(static_cast<int64_t>(one.size())));
}

class RealTokens : public testing::TestWithParam<std::string> {};

TEST_P(RealTokens, AMostlyPaddedBatchGivesEachRowsOwnNumbers) {
  const Model model = Model::load(model_dir(GetParam()));
  std::mt19937 rng(5);
  const std::vector<TokenIds> rows{random_tokens(rng, 2), random_tokens(rng, 11), random_tokens(rng, 1)};
  const ForwardBatch batch = make_batch(pointers(rows), {0, 0, 0});  // 14 real tokens of 33
  const at::Tensor got = model.forward(batch, nullptr, last_positions(rows, batch.tokens.size(1)));
  for (size_t i = 0; i < rows.size(); ++i) {
    const at::Tensor want = full_logprobs(model, rows[i])[static_cast<int64_t>(rows[i].size()) - 1];
    EXPECT_LT((got[static_cast<int64_t>(i)] - want).abs().max().item<double>(), 1e-5) << "row " << i;
  }
}

TEST_P(RealTokens, PartsRunTogetherGiveTheirOwnForwardsNumbers) {
  const Model model = Model::load(model_dir(GetParam()));
  Parts alone(model, 3), together(model, 3);
  const at::Tensor step_alone = model.forward(*alone.step().batch, &alone.running, alone.step_scored);
  const ForwardPart prefill = alone.prefill();
  const at::Tensor tail_alone = model.forward(*prefill.batch, prefill.cache, prefill.score_rows, prefill.shared);
  const std::vector<at::Tensor> both = model.forward_together({together.step(), together.prefill()});
  ASSERT_EQ(both.size(), 2u);
  EXPECT_LT((both[0] - step_alone).abs().max().item<double>(), 1e-5);
  EXPECT_LT((both[1] - tail_alone).abs().max().item<double>(), 1e-5);
  // Each part's cache holds what its own forward appends: the next token's numbers over it agree.
  const std::vector<int64_t> after_steps{8, 7, 7}, after_tails{15, 8};
  EXPECT_LT((next_after(model, together.running, after_steps) - next_after(model, alone.running, after_steps))
                .abs().max().item<double>(), 1e-5);
  if (!alone.shared) {  // (by cascade the prefix is not in the rows' cache: the next token would need it again)
    EXPECT_LT((next_after(model, together.joining, after_tails) - next_after(model, alone.joining, after_tails))
                  .abs().max().item<double>(), 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RealTokens, testing::Values("llama3", "qwen3", "gemma3_text", "mixtral", "olmo2"),
                         [](const auto& info) { return info.param; });

TEST(RealTokens, PartsRunTogetherNeedTokenWiseLayers) {
  const Model model = Model::load(model_dir("qwen3_5_text"));  // Gated DeltaNet layers keep a state
  ASSERT_FALSE(model.packs_real_tokens());
  Parts parts(model, 3);
  try {
    model.forward_together({parts.step(), parts.prefill()});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("token-wise"), std::string::npos) << e.what();
  }
}

// Bad parts are refused by name: none at all, a part that scores a padding token, scored positions not int64.
TEST(RealTokens, BadPartsAreRefusedByName) {
  const Model model = Model::load(model_dir("llama3"));
  auto expect_refused = [&](const std::vector<ForwardPart>& parts, const std::string& words) {
    try {
      model.forward_together(parts);
      FAIL() << "expected std::invalid_argument naming " << words;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_refused({}, "no batch");
  Parts parts(model, 3);
  ForwardPart padding = parts.prefill();
  // the second tail (2 tokens of 9) pads its last position
  padding.score_rows = at::tensor(std::vector<int64_t>{2 * parts.tail_batch.tokens.size(1) - 1}, at::kLong);
  expect_refused({parts.step(), padding}, "scores a padding token");
  ForwardPart int32 = parts.prefill();
  int32.score_rows = parts.tail_scored.to(at::kInt);
  expect_refused({parts.step(), int32}, "as int64");
}

}  // namespace
}  // namespace prefix_scorer::test
