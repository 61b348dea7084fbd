// The rules of the scorer core's parts, apart from any model: LivePrefixes (pins, pending rows, hits) and
// PrefillScheduler (waves after parents, within budgets).

#include "live_prefixes.h"
#include "prefill_scheduler.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace prefix_scorer::test {
namespace {

TokenIds iota_tokens(int64_t n) {
  TokenIds t(n);
  for (int64_t i = 0; i < n; ++i) t[i] = i + 1;
  return t;
}

// Root 0 (8 tokens) with children 1 and 2 (12 and 20 tokens), and a separate root 3 (6 tokens); rows: two after
// 1, one after 2, one after 0, one after 3.
ScoringPlan tree_plan() {
  ScoringPlan plan;
  TokenIds child2 = iota_tokens(8);
  for (int64_t i = 0; i < 12; ++i) child2.push_back(100 + i);
  TokenIds root3{50, 51, 52, 53, 54, 55};
  plan.entries = {{-1, iota_tokens(8)}, {0, iota_tokens(12)}, {0, child2}, {-1, root3}};
  plan.order = {{0, 1}, {1, 1}, {2, 2}, {3, 0}, {4, 3}};
  plan.window_ends = {5};
  return plan;
}

// A RunWave without a model: each prefix becomes an entry of its segment's bytes (1 byte a token).
PrefillScheduler::RunWave fake_prefill(LivePrefixes& prefixes, std::vector<std::vector<int64_t>>& waves) {
  return [&prefixes, &waves](const std::vector<int64_t>& wave) {
    waves.push_back(wave);
    for (int64_t e : wave) {
      const PrefixEntryPlan& p = prefixes.plan().entries[e];
      auto entry = std::make_shared<PrefixEntry>();
      entry->tokens = p.tokens;
      entry->parent = p.parent < 0 ? nullptr : prefixes.held(p.parent);
      entry->begin = prefixes.depth(p.parent);
      entry->bytes = p.depth() - entry->begin;
      prefixes.add(e, entry);
    }
  };
}

BatchMemory one_byte_a_token() { return {int64_t{1} << 40, 1, 0}; }

TEST(LivePrefixes, APrefixLeavesWhenItsLastRowIsDoneAncestorsAfterTheirChildren) {
  const ScoringPlan plan = tree_plan();
  PrefixCache cache(1000, 100);
  ScoringStats stats;
  PrefixScorerOptions options;
  std::vector<std::vector<int64_t>> waves;
  LivePrefixes prefixes(plan, cache, false, stats);
  const BatchMemory memory = one_byte_a_token();
  PrefillScheduler(prefixes, options, memory, fake_prefill(prefixes, waves)).prefill({0, 1, 2, 3}, true);
  prefixes.unpin();
  ASSERT_EQ(cache.entries(), 4);
  prefixes.finish(1);  // one of the two rows after 1
  EXPECT_NE(prefixes.held(1), nullptr);
  prefixes.finish(1);
  EXPECT_EQ(prefixes.held(1), nullptr);
  EXPECT_EQ(cache.entries(), 3);
  prefixes.finish(2);  // 0 still has its own row
  EXPECT_NE(prefixes.held(0), nullptr);
  prefixes.finish(0);
  EXPECT_EQ(prefixes.held(0), nullptr);
  prefixes.finish(3);
  EXPECT_EQ(cache.entries(), 0);
  EXPECT_EQ(stats.cache_misses, 4);
}

TEST(LivePrefixes, PinsAreReleasedOnEveryExitPath) {
  const ScoringPlan plan = tree_plan();
  for (const bool keep : {false, true}) {
    PrefixCache cache(1000, 100);
    ScoringStats stats;
    PrefixScorerOptions options;
    std::vector<std::vector<int64_t>> waves;
    std::vector<EntryPtr> entries;
    try {
      LivePrefixes prefixes(plan, cache, keep, stats);
      const BatchMemory memory = one_byte_a_token();
      PrefillScheduler(prefixes, options, memory, fake_prefill(prefixes, waves)).prepare({1, 3}, 0);
      for (int64_t e : {0, 1, 3}) entries.push_back(prefixes.held(e));
      for (const auto& entry : entries) EXPECT_GT(entry->pins, 0);
      throw std::runtime_error("a forward failed");  // leaves with everything pinned
    } catch (const std::runtime_error&) {
    }
    for (const auto& entry : entries) EXPECT_EQ(entry->pins, 0) << "keep " << keep;
    EXPECT_EQ(cache.entries(), keep ? 4 : 0) << "keep " << keep;  // 2 came in by look-ahead
  }
}

TEST(LivePrefixes, ACachedPrefixIsAHitOnce) {
  const ScoringPlan plan = tree_plan();
  PrefixCache cache(1000, 100);
  auto kept = std::make_shared<PrefixEntry>();
  kept->tokens = plan.entries[3].tokens;
  kept->bytes = 6;
  ASSERT_TRUE(cache.insert(kept));
  ScoringStats stats;
  LivePrefixes prefixes(plan, cache, false, stats);
  EXPECT_EQ(prefixes.live(3), kept);
  EXPECT_EQ(prefixes.live(3), kept);
  EXPECT_EQ(prefixes.live(0), nullptr);
  EXPECT_EQ(stats.cache_hits, 1);
}

TEST(PrefillScheduler, WavesFollowParentsAndLongestSegmentsFirst) {
  const ScoringPlan plan = tree_plan();
  PrefixCache cache(1000, 100);
  ScoringStats stats;
  PrefixScorerOptions options;
  std::vector<std::vector<int64_t>> waves;
  LivePrefixes prefixes(plan, cache, false, stats);
  const BatchMemory memory = one_byte_a_token();
  PrefillScheduler(prefixes, options, memory, fake_prefill(prefixes, waves)).prefill({0, 1, 2, 3}, true);
  ASSERT_EQ(waves.size(), 2u);
  EXPECT_EQ(waves[0], (std::vector<int64_t>{0, 3}));  // the roots; the children wait for 0
  EXPECT_EQ(waves[1], (std::vector<int64_t>{2, 1}));  // segments of 12 and 4 tokens
}

TEST(PrefillScheduler, WavesStayWithinTheirBudgets) {
  const ScoringPlan plan = tree_plan();
  struct Case {
    const char* what;
    void (*set)(PrefixScorerOptions&, BatchMemory&);
    size_t waves;
  };
  const std::vector<Case> cases{
      {"prefill_batch 1", [](PrefixScorerOptions& o, BatchMemory&) { o.prefill_batch = 1; }, 4},
      {"8 tokens a wave", [](PrefixScorerOptions& o, BatchMemory&) { o.max_batch_tokens = 8; }, 4},
      {"14 bytes a forward", [](PrefixScorerOptions&, BatchMemory& m) { m.max_bytes = 14; }, 4},
  };
  for (const Case& c : cases) {
    PrefixCache cache(1000, 100);
    ScoringStats stats;
    PrefixScorerOptions options;
    BatchMemory memory = one_byte_a_token();
    c.set(options, memory);
    std::vector<std::vector<int64_t>> waves;
    LivePrefixes prefixes(plan, cache, false, stats);
    PrefillScheduler(prefixes, options, memory, fake_prefill(prefixes, waves)).prefill({0, 1, 2, 3}, true);
    EXPECT_EQ(waves.size(), c.waves) << c.what;
    EXPECT_EQ(cache.entries(), 4) << c.what;
  }
}

TEST(PrefillScheduler, APrefixLargerThanTheCacheIsSkippedForGoodWithItsChildren) {
  const ScoringPlan plan = tree_plan();
  PrefixCache cache(7, 100);  // root 0 (8 tokens) can never fit; root 3 (6) can
  ScoringStats stats;
  PrefixScorerOptions options;
  options.max_cache_bytes = 7;
  std::vector<std::vector<int64_t>> waves;
  LivePrefixes prefixes(plan, cache, false, stats);
  const BatchMemory memory = one_byte_a_token();
  PrefillScheduler(prefixes, options, memory, fake_prefill(prefixes, waves)).prefill({0, 1, 2, 3}, true);
  ASSERT_EQ(waves.size(), 1u);
  EXPECT_EQ(waves[0], (std::vector<int64_t>{3}));
  EXPECT_TRUE(prefixes.state(0).uncacheable);
  EXPECT_EQ(prefixes.held(1), nullptr);
  EXPECT_EQ(prefixes.held(2), nullptr);
}

}  // namespace
}  // namespace prefix_scorer::test
