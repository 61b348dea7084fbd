// The planner's choice of prefixes and windows, and forwards cut to their memory budget.

#include "scoring/forward_segments.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <random>

namespace prefix_scorer::test {
namespace {

std::vector<ScoringRow> rows_of(const std::vector<TokenIds>& inputs, int64_t scored = 1) {
  std::vector<ScoringRow> rows;
  for (size_t i = 0; i < inputs.size(); ++i) rows.push_back({inputs[i], scored, {i}});
  return rows;
}

TokenIds seq(int64_t from, int64_t n) {
  TokenIds ids(n);
  for (int64_t i = 0; i < n; ++i) ids[i] = from + i;
  return ids;
}

TokenIds join(TokenIds a, const TokenIds& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(Planner, FindsNestedSharedPrefixesWithoutHints) {
  const TokenIds subject = seq(100, 40), question = seq(300, 35);
  const auto plan = find_shared_prefixes(rows_of({join(subject, seq(1, 5)), join(join(subject, question), {7}),
                                           join(join(subject, question), {8}), seq(400, 50)}),
                                  32, 1 << 20);
  ASSERT_EQ(plan.entries.size(), 2u);
  EXPECT_EQ(plan.entries[0].tokens, subject);
  EXPECT_EQ(plan.entries[0].parent, -1);
  EXPECT_EQ(plan.entries[1].tokens, join(subject, question));
  EXPECT_EQ(plan.entries[1].parent, 0);
  std::vector<int64_t> entry_of(4);
  for (const auto& r : plan.order) entry_of[r.row] = r.entry;
  EXPECT_EQ(entry_of, (std::vector<int64_t>{0, 1, 1, -1}));
}

TEST(Planner, ShortOrSingleUsePrefixesAreNotCached) {
  EXPECT_TRUE(find_shared_prefixes(rows_of({join(seq(1, 20), {1}), join(seq(1, 20), {2})}), 32, 1 << 20).entries.empty());
  EXPECT_TRUE(find_shared_prefixes(rows_of({seq(1, 100)}), 32, 1 << 20).entries.empty());
  EXPECT_TRUE(find_shared_prefixes({}, 32, 1 << 20).order.empty());
}

TEST(Planner, PrefixStopsBeforeTheFirstScoredPosition) {
  // Rows that share 40 tokens but score their last 5 positions: the prefix holds 35 at most... of the row
  // that scores earliest.
  const auto plan = find_shared_prefixes(rows_of({join(seq(1, 38), {1, 2}), join(seq(1, 38), {1, 3})}, 5), 32, 1 << 20);
  ASSERT_EQ(plan.entries.size(), 1u);
  EXPECT_EQ(plan.entries[0].depth(), 35);
}

TEST(Planner, SiblingsCutToTheSameTokensShareOneEntry) {
  // All five share [1 2 3 4]; R scores from position 1, so the shared level is cut below min_prefix_len and
  // made no entry. A (5 7 ..) and B (6 ..) are both cut to [1 2 3] by their first scored position: one entry.
  std::vector<ScoringRow> rows = {{{1, 2, 3, 4, 0}, 4, {0}},       {{1, 2, 3, 4, 5, 7}, 3, {1}},
                                  {{1, 2, 3, 4, 5, 7, 9}, 4, {2}}, {{1, 2, 3, 4, 6, 7}, 3, {3}},
                                  {{1, 2, 3, 4, 6, 8}, 3, {4}}};
  const auto plan = find_shared_prefixes(rows, 2, 1 << 20);
  ASSERT_EQ(plan.entries.size(), 1u);
  EXPECT_EQ(plan.entries[0].tokens, (TokenIds{1, 2, 3}));
  for (const auto& r : plan.order) EXPECT_EQ(r.entry, r.row == 0 ? -1 : 0) << "row " << r.row;
}

TEST(Planner, WindowsSortRowsByDescendingSuffix) {
  std::vector<TokenIds> inputs;
  for (int64_t s = 0; s < 3; ++s)
    for (int64_t q = 0; q < 3; ++q) inputs.push_back(join(seq(s * 100, 40), seq(1000 + s * 10 + q, 1 + (q * 2 + s) % 5)));
  const auto rows = rows_of(inputs);
  auto suffix = [&](const ScoringPlan& plan, const PlannedRow& r) {
    return rows[r.row].input.size() - plan.entries[r.entry].tokens.size();
  };
  const auto one_window = find_shared_prefixes(rows, 32, 1 << 20);
  for (size_t i = 1; i < one_window.order.size(); ++i)
    EXPECT_GE(suffix(one_window, one_window.order[i - 1]), suffix(one_window, one_window.order[i]));
  const auto per_subject = find_shared_prefixes(rows, 32, 40);  // one subject's prefix per window
  for (size_t i = 1; i < per_subject.order.size(); ++i)
    EXPECT_LE(per_subject.order[i - 1].entry, per_subject.order[i].entry);
}

// prefixes_worth_caching marks its packed trees once, before dropping short nested entries: dropping moves rows up
// to a parent, which then has more rows and tokens than the child had, so no entry becomes a tree by it. Random
// nests of shared prefixes hold the marks to tree_entries of the final plan.
TEST(Planner, PackedTreesAreTheTreesOfTheFinalPlan) {
  std::mt19937 random(7);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(random); };
  int64_t trees = 0, dropped = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<TokenIds> inputs;
    for (int64_t subject = 0; subject < pick(1, 3); ++subject) {
      const TokenIds head = seq(1000 * (subject + 1), pick(2, 12));
      for (int64_t question = 0; question < pick(1, 4); ++question) {
        const TokenIds middle = join(head, seq(100 * (question + 1), pick(1, 10)));
        for (int64_t choice = 0; choice < pick(1, 6); ++choice) inputs.push_back(join(middle, seq(10 * choice + 1, pick(1, 3))));
      }
    }
    PrefixScorerOptions options;
    options.min_prefix_len = pick(2, 8);
    options.tree_max_branches = pick(0, 5);
    options.max_batch_tokens = pick(8, 64);
    const std::vector<ScoringRow> rows = rows_of(inputs);
    const ScoringPlan plan = prefixes_worth_caching(rows, options, 1 << 20);
    const std::vector<bool> final_trees = tree_entries(plan, rows, options);
    for (size_t e = 0; e < plan.entries.size(); ++e) {
      EXPECT_EQ(plan.entries[e].packed, final_trees[e]) << "trial " << trial << " entry " << e;
      trees += final_trees[e] ? 1 : 0;
    }
    dropped += static_cast<int64_t>(find_shared_prefixes(rows, options.min_prefix_len, 1 << 20).entries.size() -
                                    plan.entries.size());
  }
  EXPECT_GT(trees, 0);    // the property was tested on trees,
  EXPECT_GT(dropped, 0);  // and on plans that dropped entries
}

TEST(Batching, ForwardsAreCutToTheirMemoryBudget) {
  const std::vector<int64_t> lengths{10, 10, 8, 8, 4, 4};
  const std::vector<int64_t> prefixes{100, 100, 100, 300, 0, 0};
  BatchMemory memory{0, 2, 1};  // 2 bytes a key slot, 1 a (query, key) pair
  EXPECT_EQ(cut_batches(lengths, 1000, 64, prefixes, memory).size(), 1u);  // unbounded
  // Two rows of 10 after 100 prefix slots: 2 x (110 x 2 + 10 x 110) = 2640 bytes; a third row would take 3960.
  memory.max_bytes = 2640;
  const auto batches = cut_batches(lengths, 1000, 64, prefixes, memory);
  ASSERT_GE(batches.size(), 2u);
  EXPECT_EQ(batches[0], std::make_pair(size_t{0}, size_t{2}));
  for (const auto& [begin, end] : batches) {
    int64_t prefix = 0;
    for (size_t i = begin; i < end; ++i) prefix = std::max(prefix, prefixes[i]);
    const auto rows = static_cast<int64_t>(end - begin);
    if (rows > 1) EXPECT_LE(forward_bytes(memory, rows, lengths[begin], prefix), memory.max_bytes);
  }
  memory.max_bytes = 1;  // nothing fits: one row a forward, never none
  EXPECT_EQ(cut_batches(lengths, 1000, 64, prefixes, memory).size(), lengths.size());
}

}  // namespace
}  // namespace prefix_scorer::test
