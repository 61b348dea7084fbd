// Tree-packed forwards: a trunk once, then each branch continuing it, equal to each branch's own full forward.

#include "test_support.h"

#include <gtest/gtest.h>

#include <random>

namespace prefix_scorer::test {
namespace {

TokenIds random_tokens(std::mt19937& rng, int64_t n) {
  TokenIds ids(n);
  for (auto& id : ids) id = std::uniform_int_distribution<int64_t>(0, 499)(rng);
  return ids;
}

// One packed row: the trunk at positions [start, start + trunk), each branch at [start + trunk, ...).
PackedRow pack(const TokenIds& trunk, const std::vector<TokenIds>& branches, int64_t start) {
  PackedRow row;
  for (size_t i = 0; i < trunk.size(); ++i) {
    row.tokens.push_back(trunk[i]);
    row.positions.push_back(start + static_cast<int64_t>(i));
    row.branch.push_back(0);
  }
  for (size_t b = 0; b < branches.size(); ++b) {
    for (size_t i = 0; i < branches[b].size(); ++i) {
      row.tokens.push_back(branches[b][i]);
      row.positions.push_back(start + static_cast<int64_t>(trunk.size() + i));
      row.branch.push_back(static_cast<int64_t>(b) + 1);
    }
  }
  return row;
}

class TreeForward : public testing::TestWithParam<std::string> {};

TEST_P(TreeForward, EachBranchSeesTheTrunkAndItselfOnly) {
  const Model model = Model::load(model_dir(GetParam()));
  std::mt19937 rng(11);
  const TokenIds prefix = random_tokens(rng, 9);
  for (const bool cached_prefix : {false, true}) {
    // Two packed rows of different sizes in one padded batch.
    const std::vector<std::pair<TokenIds, std::vector<TokenIds>>> trees{
        {random_tokens(rng, 12), {random_tokens(rng, 3), random_tokens(rng, 5), random_tokens(rng, 1)}},
        {random_tokens(rng, 4), {random_tokens(rng, 7), random_tokens(rng, 2)}}};
    const int64_t start = cached_prefix ? static_cast<int64_t>(prefix.size()) : 0;
    std::vector<PackedRow> rows;
    for (const auto& [trunk, branches] : trees) rows.push_back(pack(trunk, branches, start));
    const ForwardBatch batch = make_packed_batch(rows);
    const int64_t width = batch.tokens.size(1);
    KvCache cache(model.config().num_layers);
    if (cached_prefix) {
      const ForwardBatch p = make_batch({&prefix, &prefix}, {0, 0});
      model.forward(p, &cache, at::empty({0}, at::kLong));
    }
    const at::Tensor all = at::arange(2 * width, at::kLong);
    const at::Tensor got = model.forward(batch, cached_prefix ? &cache : nullptr, all).view({2, width, -1});
    for (size_t r = 0; r < trees.size(); ++r) {
      const auto& [trunk, branches] = trees[r];
      int64_t offset = static_cast<int64_t>(trunk.size());
      for (const TokenIds& branch : branches) {
        TokenIds whole = cached_prefix ? prefix : TokenIds{};
        whole.insert(whole.end(), trunk.begin(), trunk.end());
        whole.insert(whole.end(), branch.begin(), branch.end());
        const at::Tensor want = full_logprobs(model, whole);
        const auto n = static_cast<int64_t>(branch.size());
        EXPECT_TRUE(at::allclose(got[r].narrow(0, offset, n), want.narrow(0, want.size(0) - n, n), 1e-5, 1e-5))
            << "row " << r << ", branch at " << offset << ", cached prefix " << cached_prefix;
        EXPECT_TRUE(at::allclose(got[r].narrow(0, 0, static_cast<int64_t>(trunk.size())),
                                 want.narrow(0, start, static_cast<int64_t>(trunk.size())), 1e-5, 1e-5));
        offset += n;
      }
    }
    if (cached_prefix) {  // the branches' slots are out of reach of a later forward; the trunks are not
      const auto trunk_slots = cache.valid().narrow(1, start, width).sum().item<int64_t>();
      EXPECT_EQ(trunk_slots, 12 + 4);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TreeForward, testing::ValuesIn(fixture_models()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace prefix_scorer::test
