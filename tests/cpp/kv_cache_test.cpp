// The KV cache, padding and layer placement give the numbers of one plain full forward.

#include "test_support.h"

#include <gtest/gtest.h>

namespace prefix_scorer::test {
namespace {

class CachedForward : public testing::TestWithParam<std::string> {};

TEST_P(CachedForward, PrefillThenRestEqualsFullForward) {
  const TokenIds tokens = expected_scores(GetParam()).front().request.context;  // 71 tokens
  const Model model = for_length(Model::load(model_dir(GetParam())), static_cast<int64_t>(tokens.size()));
  const at::Tensor full = full_logprobs(model, tokens);
  for (const size_t split : {1, 20, 70}) {
    const TokenIds head(tokens.begin(), tokens.begin() + split), tail(tokens.begin() + split, tokens.end());
    KvCache cache(model.config().num_layers);
    const at::Tensor first = model.forward(make_batch({&head}, {0}), &cache, at::arange(int64_t(split), at::kLong));
    EXPECT_EQ(cache.slots(), static_cast<int64_t>(split));
    const at::Tensor rest = model.forward(make_batch({&tail}, {int64_t(split)}), &cache,
                                          at::arange(int64_t(tail.size()), at::kLong));
    EXPECT_LT((at::cat({first, rest}) - full).abs().max().item<double>(), 1e-5) << "split " << split;
  }
}

TEST_P(CachedForward, PaddedRowsEqualUnpaddedOnes) {
  // Two rows of different lengths through a padded cache: padding slots sit between a row's prefix and its
  // suffix and must never be attended to.
  const Model model = Model::load(model_dir(GetParam()));
  const TokenIds a{7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, b{400, 3, 77, 21, 5, 6};
  const TokenIds a_head(a.begin(), a.begin() + 9), a_tail(a.begin() + 9, a.end());
  const TokenIds b_head(b.begin(), b.begin() + 2), b_tail(b.begin() + 2, b.end());
  KvCache cache(model.config().num_layers);
  const ForwardBatch heads = make_batch({&a_head, &b_head}, {0, 0});  // b_head padded by 7 slots
  model.forward(heads, &cache, at::zeros({1}, at::kLong));
  const ForwardBatch tails = make_batch({&a_tail, &b_tail}, {9, 2});  // a_tail padded by 2 slots
  const int64_t t = tails.tokens.size(1);
  const at::Tensor rows = at::tensor({int64_t{0}, int64_t{1}, t, t + 1, t + 2, t + 3}, at::kLong);
  const at::Tensor got = model.forward(tails, &cache, rows);
  const at::Tensor want_a = full_logprobs(model, a).slice(0, 9);
  const at::Tensor want_b = full_logprobs(model, b).slice(0, 2);
  EXPECT_LT((got.slice(0, 0, 2) - want_a).abs().max().item<double>(), 1e-5);
  EXPECT_LT((got.slice(0, 2) - want_b).abs().max().item<double>(), 1e-5);
  EXPECT_GT(cache.bytes(), 0);
}

TEST_P(CachedForward, TwoEntryDeviceListEqualsOneDevice) {
  ModelOptions split;
  split.layer_devices = {"cpu", "cpu"};
  const Model one = Model::load(model_dir(GetParam()));
  const Model two = Model::load(model_dir(GetParam()), split);
  const TokenIds tokens = expected_scores(GetParam())[2].request.context;
  EXPECT_TRUE(at::equal(full_logprobs(one, tokens), full_logprobs(two, tokens)));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CachedForward, testing::ValuesIn(fixture_models()),
                         [](const auto& info) { return info.param; });

TEST(CachedForwardErrors, MismatchedCacheIsRejected) {
  const Model model = Model::load(model_dir("llama3"));
  const TokenIds one{1, 2, 3};
  KvCache wrong_layers(1);
  EXPECT_THROW(model.forward(make_batch({&one}, {0}), &wrong_layers, at::zeros({1}, at::kLong)),
               std::invalid_argument);
  KvCache cache(model.config().num_layers);
  model.forward(make_batch({&one}, {0}), &cache, at::zeros({1}, at::kLong));
  EXPECT_THROW(model.forward(make_batch({&one, &one}, {3, 3}), &cache, at::zeros({1}, at::kLong)),
               std::invalid_argument);
}

TEST(ForwardErrors, SharedPrefixesMustFitTheBatchAndTheModel) {
  const Model model = Model::load(model_dir("llama3"));
  const TokenIds row{1, 2, 3};
  SharedPrefixes shared;
  shared.layers.assign(model.config().num_layers,
                       {at::zeros({1, 2, 4, 16}), at::zeros({1, 2, 4, 16})});
  shared.lengths = at::tensor({int64_t{4}}, at::kLong);
  shared.row_prefix = at::zeros({2}, at::kLong);  // two rows, the batch has one
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              model.forward(make_batch({&row}, {4}), nullptr, at::zeros({1}, at::kLong), &shared);
            }).find("do not match"),
            std::string::npos);
  const Model windowed = Model::load(model_with_config_edit("mistral", "\"sliding_window\": 16", "\"sliding_window\": 8"));
  shared.row_prefix = at::zeros({1}, at::kLong);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              windowed.forward(make_batch({&row}, {4}), nullptr, at::zeros({1}, at::kLong), &shared);
            }).find("sliding window"),
            std::string::npos);
}

TEST(ForwardErrors, TorchErrorsCarryTheBatchShape) {
  const Model model = Model::load(model_dir("llama3"));
  const TokenIds tokens{1, 2, 3};
  const std::string message = message_of<c10::Error>(
      [&] { model.forward(make_batch({&tokens, &tokens}, {0, 0}), nullptr, at::tensor({int64_t{99}}, at::kLong)); });
  EXPECT_NE(message.find("2 rows x 3 tokens"), std::string::npos) << message;
}


}  // namespace
}  // namespace prefix_scorer::test
