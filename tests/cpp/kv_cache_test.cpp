// The KV cache, padding and layer placement give the numbers of one plain full forward.

#include "model/config/model_config.h"
#include "model/forward_batch.h"
#include "test_support.h"

#include <gtest/gtest.h>

namespace prefix_scorer::test {
namespace {

class CachedForward : public testing::TestWithParam<std::string> {};

TEST_P(CachedForward, PrefillThenRestEqualsFullForward) {
  const TokenIds tokens = expected_scores(GetParam()).front().request.context;  // 71 tokens
  const Model model = Model::load(model_dir(GetParam()));
  const std::vector<int64_t> variant = rope_variant_for(model, static_cast<int64_t>(tokens.size()));
  const at::Tensor full = full_logprobs(model, tokens);
  for (const size_t split : {1, 20, 70}) {
    const TokenIds head(tokens.begin(), tokens.begin() + split), tail(tokens.begin() + split, tokens.end());
    KvCache cache(model.config().num_layers);
    const at::Tensor first =
        model.forward(make_batch({&head}, {0}, variant), &cache, at::arange(int64_t(split), at::kLong));
    EXPECT_EQ(cache.slots(), static_cast<int64_t>(split));
    const at::Tensor rest = model.forward(make_batch({&tail}, {int64_t(split)}, variant), &cache,
                                          at::arange(int64_t(tail.size()), at::kLong));
    EXPECT_LT((at::cat({first, rest}) - full).abs().max().item<double>(), split_forward_tolerance(GetParam()))
        << "split " << split;
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
INSTANTIATE_TEST_SUITE_P(RecurrentFixtures, CachedForward, testing::ValuesIn(recurrent_fixture_models()),
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
                       LayerCache{{at::zeros({1, 2, 4, 16}), at::zeros({1, 2, 4, 16})}});
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


// A cache of `rows` rows whose row r holds `lengths[r]` valid slots at its end, one layer of keys equal to
// 100 * row + slot (values the negatives).
KvCache filled(const std::vector<int64_t>& lengths, int64_t slots) {
  KvCache cache(1);
  const auto rows = static_cast<int64_t>(lengths.size());
  const at::Tensor keys = (100 * at::arange(rows).view({rows, 1, 1, 1}) + at::arange(slots).view({1, 1, slots, 1}))
                              .to(at::kFloat).expand({rows, 1, slots, 2}).contiguous();
  cache.append_layer(0, {{keys, -keys}});
  at::Tensor valid = at::zeros({rows, slots}, at::kBool);
  for (int64_t r = 0; r < rows; ++r) valid[r].narrow(0, slots - lengths[r], lengths[r]).fill_(true);
  cache.append_slots(at::arange(slots).expand({rows, slots}).contiguous(), valid);
  return cache;
}

TEST(KvCacheRows, KeepRowsKeepsThemInOrderAndDropsSlotsNoKeptRowUses) {
  KvCache cache = filled({2, 5, 3}, 5);
  cache.keep_rows({2, 0});
  ASSERT_EQ(cache.slots(), 3);  // row 1 alone used the first two slots
  EXPECT_EQ(cache.layer(0).keys().size(0), 2);
  EXPECT_EQ(cache.layer(0).keys()[0][0][0][0].item<float>(), 202);
  EXPECT_EQ(cache.layer(0).keys()[1][0][2][0].item<float>(), 4);
  EXPECT_EQ(cache.layer(0).values()[1][0][2][1].item<float>(), -4);
  EXPECT_TRUE(at::equal(cache.valid(), at::tensor({1, 1, 1, 0, 1, 1}, at::kLong).view({2, 3}).to(at::kBool)));
  EXPECT_TRUE(at::equal(cache.positions()[0], at::tensor({2, 3, 4}, at::kLong)));
}

TEST(KvCacheRows, AddedRowsEndAtTheSameSlotEitherSideShorter) {
  for (const int64_t added_slots : {int64_t{2}, int64_t{5}}) {  // shorter than the cache's 3 slots, then longer
    KvCache cache = filled({3}, 3);
    cache.add_rows(filled({2, added_slots}, added_slots));
    const int64_t slots = std::max<int64_t>(3, added_slots);
    ASSERT_EQ(cache.slots(), slots);
    ASSERT_EQ(cache.layer(0).keys().size(0), 3);
    // Each row's last slot is its own last slot, and only its own slots are valid.
    EXPECT_EQ(cache.layer(0).keys()[0][0][slots - 1][0].item<float>(), 2);
    EXPECT_EQ(cache.layer(0).keys()[1][0][slots - 1][0].item<float>(), added_slots - 1);
    EXPECT_EQ(cache.layer(0).keys()[2][0][slots - 1][0].item<float>(), 100 + added_slots - 1);
    EXPECT_EQ(cache.valid().sum(1)[0].item<int64_t>(), 3);
    EXPECT_EQ(cache.valid().sum(1)[1].item<int64_t>(), 2);
    EXPECT_EQ(cache.valid().sum(1)[2].item<int64_t>(), added_slots);
    EXPECT_EQ(cache.positions()[0][slots - 1].item<int64_t>(), 2);
  }
}

TEST(KvCacheRows, RowsOfAnotherModelAreRefused) {
  KvCache two_layers(2);
  EXPECT_EQ(message_of<std::invalid_argument>([&] { two_layers.add_rows(filled({1}, 1)); }),
            "add_rows: the caches have different numbers of layers");
}

TEST(KvCacheRows, RowsPlacedWhereTheyDoNotFitAreNamed) {
  KvCache cache = filled({3, 2}, 3);
  auto error = [&](const KvCache& rows, const std::vector<int64_t>& at) {
    return message_of<std::invalid_argument>([&] { cache.place_rows(rows, at); });
  };
  EXPECT_EQ(error(KvCache(2), {}), "place_rows: the caches have different numbers of layers");
  EXPECT_EQ(error(filled({1, 1}, 1), {0}), "place_rows: 1 rows named for 2 rows placed");
  EXPECT_EQ(error(filled({4}, 4), {0}), "place_rows: rows of 4 slots do not fit 3 slots");
  EXPECT_EQ(error(filled({1}, 1), {2}), "place_rows: row 2 is not a distinct row of the 2 here");
  EXPECT_EQ(error(filled({1, 1}, 1), {1, 1}), "place_rows: row 1 is not a distinct row of the 2 here");
  cache.place_rows(filled({2}, 2), {1});  // and one that fits: the row's last slots, the others untouched
  EXPECT_EQ(cache.layer(0).keys()[1][0][2][0].item<float>(), 1);
  EXPECT_EQ(cache.layer(0).keys()[0][0][2][0].item<float>(), 2);
  EXPECT_EQ(cache.valid().sum(1)[1].item<int64_t>(), 2);
}

TEST(KvCacheRows, GrowingInPlaceHoldsWhatConcatenationHolds) {
  KvCache grown(1), joined(1);
  grown.grow_in_place();
  for (int64_t step = 0; step < 9; ++step) {
    const at::Tensor keys = at::full({2, 1, step % 3 + 1, 4}, static_cast<float>(step));
    for (KvCache* cache : {&grown, &joined}) cache->append_layer(0, {{keys, keys * 2}});
  }
  EXPECT_TRUE(at::equal(grown.layer(0).keys(), joined.layer(0).keys()));
  EXPECT_TRUE(at::equal(grown.layer(0).values(), joined.layer(0).values()));
  // Room to spare: the next step writes into it instead of copying what is there.
  const void* before = grown.layer(0).keys().data_ptr();
  grown.append_layer(0, {{at::ones({2, 1, 1, 4}), at::ones({2, 1, 1, 4})}});
  EXPECT_EQ(grown.layer(0).keys().data_ptr(), before);
}

// Room reserved ahead: appends up to it write in place and copy nothing already held; one past it grows the room
// (doubling) and copies what was there, counted.
TEST(KvCacheRows, ReservedRoomTakesAppendsWithoutCopies) {
  KvCache cache(1);
  cache.grow_in_place();
  cache.reserve(6);
  const at::Tensor step = at::ones({2, 1, 1, 4});
  const int64_t before = kv_bytes_copied();
  cache.append_layer(0, {{step, step}});
  const void* storage = cache.layer(0).keys().data_ptr();
  for (int64_t i = 1; i < 6; ++i) cache.append_layer(0, {{step * i, step * i}});
  EXPECT_EQ(cache.layer(0).keys().data_ptr(), storage);
  EXPECT_EQ(kv_bytes_copied(), before);
  EXPECT_EQ(cache.layer(0).keys()[1][0][5][0].item<float>(), 5);
  cache.append_layer(0, {{step, step}});
  EXPECT_NE(cache.layer(0).keys().data_ptr(), storage);
  EXPECT_EQ(kv_bytes_copied() - before, 2 * 2 * 6 * 4 * 4);  // keys and values of 2 rows, 6 slots of 4 floats
  EXPECT_EQ(cache.layer(0).keys()[1][0][5][0].item<float>(), 5);
}

// Layer 1 keeps a single tensor of its own width, as a latent will: rows added and kept and slots grown in place move
// it exactly as they move layer 0's keys.
TEST(KvCacheRows, ALayerOfOneTensorMovesAsKeysAndValuesDo) {
  auto latent_of = [](const at::Tensor& keys) { return keys.narrow(3, 0, 1).expand({-1, -1, -1, 3}); };
  auto two_kinds = [&](const std::vector<int64_t>& lengths, int64_t slots) {
    const KvCache keys_only = filled(lengths, slots);
    KvCache cache(2);
    cache.append_layer(0, keys_only.layer(0));
    cache.append_layer(1, {{latent_of(keys_only.layer(0).keys()).contiguous()}});
    cache.append_slots(keys_only.positions(), keys_only.valid());
    return cache;
  };
  KvCache cache = two_kinds({3}, 3);
  cache.grow_in_place();
  cache.add_rows(two_kinds({2, 5}, 5));
  cache.keep_rows({2, 0});
  const at::Tensor step = at::full({2, 1, 1, 2}, 7.0F);
  cache.append_layer(0, {{step, -step}});
  cache.append_layer(1, {{latent_of(step).contiguous()}});
  ASSERT_EQ(cache.layer(1).slotted.size(), 1U);
  EXPECT_EQ(cache.layer(1).slots(), cache.layer(0).slots());
  EXPECT_TRUE(at::equal(cache.layer(1).slotted[0], latent_of(cache.layer(0).keys())));
  EXPECT_EQ(cache.layer(1).keys()[0][0][0][2].item<float>(), 100);  // row 0: the added cache's second row, slot 0
  EXPECT_EQ(cache.bytes(), 2 * 2 * 6 * 2 * 4 + 2 * 6 * 3 * 4);
}

}  // namespace
}  // namespace prefix_scorer::test
