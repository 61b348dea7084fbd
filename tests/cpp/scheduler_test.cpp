// The rules of the scorer core's parts, apart from any model: LivePrefixes (pins, pending rows, hits) and
// PrefillScheduler (waves after parents, within budgets).

#include "scoring/live_prefixes.h"
#include "scoring/prefill_scheduler.h"
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

// Root 0 (8 tokens) with children 1 and 2 (19 and 20 tokens), and a separate root 3 (7 tokens); rows: two after
// 1, one after 2, one after 0, one after 3.
ScoringPlan tree_plan() {
  ScoringPlan plan;
  TokenIds child2 = iota_tokens(8);
  for (int64_t i = 0; i < 12; ++i) child2.push_back(100 + i);
  TokenIds root3{50, 51, 52, 53, 54, 55, 56};
  plan.entries = {{-1, iota_tokens(8)}, {0, iota_tokens(19)}, {0, child2}, {-1, root3}};
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

// One call's prefixes over tree_plan() in a cache that outlives the call (the scorer's), scheduled with the fake
// prefill; `waves` records what ran.
struct FakeCall {
  explicit FakeCall(PrefixCache& c, PrefixScorerOptions o = {}, BatchMemory m = one_byte_a_token(), bool keep = false,
                    ScoringPlan p = tree_plan())
      : plan(std::move(p)), options(o), memory(m), cache(c), prefixes(plan, cache, keep, stats),
        scheduler(prefixes, options, memory, fake_prefill(prefixes, waves)) {}
  ScoringPlan plan;
  PrefixScorerOptions options;
  BatchMemory memory;
  PrefixCache& cache;
  ScoringStats stats;
  std::vector<std::vector<int64_t>> waves;
  LivePrefixes prefixes;
  PrefillScheduler scheduler;
};

TEST(LivePrefixes, APrefixLeavesWhenItsLastRowIsDoneAncestorsAfterTheirChildren) {
  PrefixCache cache(1000, 100);
  FakeCall call(cache);
  call.scheduler.prefill({0, 1, 2, 3}, true);
  call.prefixes.unpin();
  ASSERT_EQ(call.cache.entries(), 4);
  call.prefixes.finish(1);  // one of the two rows after 1
  EXPECT_NE(call.prefixes.held(1), nullptr);
  call.prefixes.finish(1);
  EXPECT_EQ(call.prefixes.held(1), nullptr);
  EXPECT_EQ(call.cache.entries(), 3);
  call.prefixes.finish(2);  // 0 still has its own row
  EXPECT_NE(call.prefixes.held(0), nullptr);
  call.prefixes.finish(0);
  EXPECT_EQ(call.prefixes.held(0), nullptr);
  call.prefixes.finish(3);
  EXPECT_EQ(call.cache.entries(), 0);
  EXPECT_EQ(call.stats.cache_misses, 4);
}

TEST(LivePrefixes, PinsAreReleasedOnEveryExitPath) {
  for (const bool keep : {false, true}) {
    PrefixCache cache(1000, 100);
    std::vector<EntryPtr> entries;
    try {
      FakeCall call(cache, {}, one_byte_a_token(), keep);
      call.scheduler.prepare({1, 3}, 0);  // 0, 1 and 3 pinned; 2 by look-ahead, not pinned
      for (int64_t e : {0, 1, 3}) entries.push_back(call.prefixes.held(e));
      for (const auto& entry : entries) EXPECT_GT(entry->pins, 0);
      throw std::runtime_error("a forward failed");  // leaves the call with everything pinned
    } catch (const std::runtime_error&) {
    }
    for (const auto& entry : entries) EXPECT_EQ(entry->pins, 0) << "keep " << keep;
    EXPECT_EQ(cache.entries(), keep ? 4 : 0) << "keep " << keep;
  }
}

TEST(LivePrefixes, ACachedPrefixIsAHitOnce) {
  PrefixCache cache(1000, 100);
  FakeCall call(cache);
  auto kept = std::make_shared<PrefixEntry>();
  kept->tokens = call.plan.entries[3].tokens;
  kept->bytes = 6;
  ASSERT_TRUE(call.cache.insert(kept));
  EXPECT_EQ(call.prefixes.lookup(3), kept);
  EXPECT_EQ(call.prefixes.lookup(3), kept);
  EXPECT_EQ(call.prefixes.lookup(0), nullptr);
  EXPECT_EQ(call.stats.cache_hits, 1);
}

TEST(PrefillScheduler, WavesFollowParentsAndLongestSegmentsFirst) {
  PrefixCache cache(1000, 100);
  FakeCall call(cache);
  call.scheduler.prefill({0, 1, 2, 3}, true);
  ASSERT_EQ(call.waves.size(), 2u);
  EXPECT_EQ(call.waves[0], (std::vector<int64_t>{0, 3}));  // the roots; the children wait for 0
  EXPECT_EQ(call.waves[1], (std::vector<int64_t>{2, 1}));  // segments of 12 and 11 tokens
}

TEST(PrefillScheduler, AWavePadsAtMostASixteenthOfItsTokens) {
  ScoringPlan plan;
  plan.entries = {{-1, iota_tokens(16)}, {-1, TokenIds(15, 7)}, {-1, TokenIds(4, 9)}};
  plan.order = {{0, 0}, {1, 1}, {2, 2}};
  plan.window_ends = {3};
  PrefixCache cache(1000, 100);
  FakeCall call(cache, {}, one_byte_a_token(), false, plan);
  call.scheduler.prefill({0, 1, 2}, true);
  ASSERT_EQ(call.waves.size(), 2u);
  EXPECT_EQ(call.waves[0], (std::vector<int64_t>{0, 1}));  // 1 padding token in 32
  EXPECT_EQ(call.waves[1], (std::vector<int64_t>{2}));     // with it: 13 in 48
}

TEST(PrefillScheduler, WavesStayWithinTheirBudgets) {
  PrefixScorerOptions one_a_wave, eight_tokens;
  one_a_wave.prefill_batch = 1;
  eight_tokens.max_batch_tokens = 8;
  BatchMemory fourteen_bytes = one_byte_a_token();
  fourteen_bytes.max_bytes = 14;
  const std::vector<std::pair<PrefixScorerOptions, BatchMemory>> budgets{
      {one_a_wave, one_byte_a_token()}, {eight_tokens, one_byte_a_token()}, {{}, fourteen_bytes}};
  for (const auto& [options, memory] : budgets) {
    PrefixCache cache(1000, 100);
    FakeCall call(cache, options, memory);
    call.scheduler.prefill({0, 1, 2, 3}, true);
    EXPECT_EQ(call.waves.size(), 4u);  // one prefix a wave under each budget
    EXPECT_EQ(cache.entries(), 4);
  }
}

TEST(PrefillScheduler, APrefixLargerThanTheCacheIsSkippedForGoodWithItsChildren) {
  PrefixScorerOptions small;
  small.max_cache_bytes = 7;  // root 0 (8 tokens) can never fit; root 3 (7) can
  PrefixCache cache(small.max_cache_bytes, small.max_cache_entries);
  FakeCall call(cache, small);
  call.scheduler.prefill({0, 1, 2, 3}, true);
  ASSERT_EQ(call.waves.size(), 1u);
  EXPECT_EQ(call.waves[0], (std::vector<int64_t>{3}));
  EXPECT_TRUE(call.prefixes.state(0).uncacheable);
  EXPECT_EQ(call.prefixes.held(1), nullptr);
  EXPECT_EQ(call.prefixes.held(2), nullptr);
}

}  // namespace
}  // namespace prefix_scorer::test
