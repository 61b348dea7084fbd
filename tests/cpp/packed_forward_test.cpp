// Packed forwards: independent segments in one row, each a trunk and branches continuing it, equal to each
// branch's own full forward.

#include "model/config/model_config.h"
#include "model/forward_batch.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <random>

namespace prefix_scorer::test {
namespace {

// A segment: its trunk, then branches continuing it (none: a plain sequence).
struct Tree {
  TokenIds trunk;
  std::vector<TokenIds> branches;
};

void append(PackedRow& row, const TokenIds& tokens, int64_t position, int64_t segment, int64_t branch) {
  for (int64_t id : tokens) {
    row.tokens.push_back(id);
    row.positions.push_back(position++);
    row.segment.push_back(segment);
    row.branch.push_back(branch);
  }
}

// One packed row: each segment's trunk at positions [start, start + trunk), its branches from there on.
PackedRow pack(const std::vector<Tree>& segments, int64_t start) {
  PackedRow row;
  for (size_t s = 0; s < segments.size(); ++s) {
    const auto& [trunk, branches] = segments[s];
    append(row, trunk, start, static_cast<int64_t>(s), 0);
    for (size_t b = 0; b < branches.size(); ++b)
      append(row, branches[b], start + static_cast<int64_t>(trunk.size()), static_cast<int64_t>(s),
             static_cast<int64_t>(b) + 1);
  }
  return row;
}

class PackedForward : public testing::TestWithParam<std::string> {};

TEST_P(PackedForward, EachBranchSeesItsOwnSegmentsTrunkAndItselfOnly) {
  const Model model = Model::load(model_dir(GetParam()));
  std::mt19937 rng(11);
  const TokenIds prefix = random_tokens(rng, 9);
  for (const bool cached_prefix : {false, true}) {
    // Two rows of different sizes in one padded batch: two trees and a plain sequence, then one tree.
    const std::vector<std::vector<Tree>> rows_segments{
        {{random_tokens(rng, 12), {random_tokens(rng, 3), random_tokens(rng, 5), random_tokens(rng, 1)}},
         {random_tokens(rng, 6), {}},
         {random_tokens(rng, 2), {random_tokens(rng, 4), random_tokens(rng, 4)}}},
        {{random_tokens(rng, 4), {random_tokens(rng, 7), random_tokens(rng, 2)}}}};
    const int64_t start = cached_prefix ? static_cast<int64_t>(prefix.size()) : 0;
    std::vector<PackedRow> rows;
    for (const auto& segments : rows_segments) rows.push_back(pack(segments, start));
    const ForwardBatch batch = make_packed_batch(rows);
    ASSERT_TRUE(batch.segment.defined() && batch.branch.defined());
    const int64_t width = batch.tokens.size(1);
    KvCache cache(model.config().num_layers);
    if (cached_prefix) {
      const ForwardBatch p = make_batch({&prefix, &prefix}, {0, 0});
      model.forward(p, &cache, at::empty({0}, at::kLong));
    }
    const at::Tensor all = at::arange(2 * width, at::kLong);
    const at::Tensor got = model.forward(batch, cached_prefix ? &cache : nullptr, all).view({2, width, -1});
    for (size_t r = 0; r < rows_segments.size(); ++r) {
      int64_t offset = 0;
      for (const auto& [trunk, branches] : rows_segments[r]) {
        TokenIds whole = cached_prefix ? prefix : TokenIds{};
        whole.insert(whole.end(), trunk.begin(), trunk.end());
        const auto t = static_cast<int64_t>(trunk.size());
        const at::Tensor trunk_want = full_logprobs(model, whole);
        EXPECT_TRUE(at::allclose(got[r].narrow(0, offset, t), trunk_want.narrow(0, start, t), 1e-5, 1e-5))
            << "row " << r << ", trunk at " << offset << ", cached prefix " << cached_prefix;
        offset += t;
        for (const TokenIds& branch : branches) {
          TokenIds branch_whole = whole;
          branch_whole.insert(branch_whole.end(), branch.begin(), branch.end());
          const at::Tensor want = full_logprobs(model, branch_whole);
          const auto n = static_cast<int64_t>(branch.size());
          EXPECT_TRUE(at::allclose(got[r].narrow(0, offset, n), want.narrow(0, want.size(0) - n, n), 1e-5, 1e-5))
              << "row " << r << ", branch at " << offset << ", cached prefix " << cached_prefix;
          offset += n;
        }
      }
    }
    if (cached_prefix) {  // only the first segment's trunk is in reach of a later forward
      const auto reachable = cache.valid().narrow(1, start, width).sum().item<int64_t>();
      EXPECT_EQ(reachable, 12 + 4);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PackedForward, testing::ValuesIn(fixture_models()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace prefix_scorer::test
