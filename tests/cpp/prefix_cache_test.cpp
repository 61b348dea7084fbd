// The prefix cache: LRU order, pins, nesting, entry and byte budgets.

#include "test_support.h"

#include <gtest/gtest.h>

namespace prefix_scorer::test {
namespace {

EntryPtr entry(TokenIds tokens, int64_t bytes, EntryPtr parent = nullptr) {
  auto e = std::make_shared<PrefixEntry>();
  e->tokens = std::move(tokens);
  e->bytes = bytes;
  e->parent = std::move(parent);
  return e;
}

TEST(PrefixCache, EvictsTheLeastRecentlyUsedUnpinnedLeaf) {
  PrefixCache cache(300, 10);
  const auto a = entry({1}, 100), b = entry({2}, 100), c = entry({3}, 100);
  ASSERT_TRUE(cache.insert(a) && cache.insert(b) && cache.insert(c));
  EXPECT_EQ(cache.find({1}), a);  // a is now the most recent; b the least
  ASSERT_TRUE(cache.insert(entry({4}, 100)));
  EXPECT_EQ(cache.find({2}), nullptr);
  EXPECT_EQ(cache.evictions(), 1);
  c->pins = 1;
  ASSERT_TRUE(cache.insert(entry({5}, 100)));
  EXPECT_EQ(cache.find({3}), c);  // pinned, so a went instead of c
  EXPECT_EQ(cache.find({1}), nullptr);
  EXPECT_EQ(cache.bytes(), 300);
  EXPECT_EQ(cache.peak_bytes(), 300);
}

TEST(PrefixCache, KeepsParentsOfCachedChildrenAndRefusesWhatCannotFit) {
  PrefixCache cache(250, 10);
  const auto parent = entry({1, 2}, 100);
  const auto child = entry({1, 2, 3}, 100, parent);
  ASSERT_TRUE(cache.insert(parent) && cache.insert(child));
  EXPECT_EQ(parent->children, 1);
  child->pins = 1;
  EXPECT_FALSE(cache.can_fit(100));     // parent is needed by a pinned child
  EXPECT_FALSE(cache.insert(entry({9}, 100)));
  EXPECT_EQ(cache.entries(), 2);
  child->pins = 0;
  ASSERT_TRUE(cache.insert(entry({9}, 200)));  // child first, then its parent
  EXPECT_EQ(cache.entries(), 1);
  EXPECT_EQ(cache.evictions(), 2);
  EXPECT_FALSE(cache.insert(entry({8}, 251)));
}

TEST(PrefixCache, EntryBudget) {
  PrefixCache cache(1000, 2);
  ASSERT_TRUE(cache.insert(entry({1}, 1)) && cache.insert(entry({2}, 1)) && cache.insert(entry({3}, 1)));
  EXPECT_EQ(cache.entries(), 2);
  EXPECT_FALSE(PrefixCache(1000, 0).insert(entry({1}, 1)));
}

TEST(PrefixCache, RefusesASecondEntryWithTheSameTokens) {
  PrefixCache cache(1000, 10);
  ASSERT_TRUE(cache.insert(entry({1, 2}, 10)));
  EXPECT_FALSE(cache.insert(entry({1, 2}, 10)));
  EXPECT_EQ(cache.entries(), 1);
}

}  // namespace
}  // namespace prefix_scorer::test
