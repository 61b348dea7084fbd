// A forward's prefixes stacked once (PrefixStack) and kept for the next forwards over the same prefixes: a kept
// stack gives those forwards exactly what a fresh one gives, whatever order their rows take the prefixes in, is made
// anew for other prefixes (gather reads it for some of its own), and is not made to keep by gather where it would be
// as large as the rows gathered from it.

#include "model/forward_batch.h"
#include "scoring/batching.h"
#include "scoring/cascade_or_gather.h"
#include "scoring/prefix_kv.h"
#include "test_support.h"

#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

namespace prefix_scorer::test {
namespace {

TokenIds counting(int64_t length, int64_t from) {
  TokenIds tokens(length);
  for (int64_t i = 0; i < length; ++i) tokens[i] = 1 + (from + 3 * i) % 500;
  return tokens;
}

// Log-probabilities of a batch of suffixes after `prefixes` (one a row), by cascade or by gather, with `kept`.
at::Tensor after(const Model& model, const std::vector<const PrefixEntry*>& prefixes, bool cascade, PrefixStack* kept) {
  std::vector<TokenIds> suffixes;
  std::vector<const TokenIds*> inputs;
  std::vector<int64_t> starts, lengths, scored;
  for (size_t r = 0; r < prefixes.size(); ++r) suffixes.push_back(counting(7 + static_cast<int64_t>(r), 11 * r));
  for (size_t r = 0; r < prefixes.size(); ++r) {
    inputs.push_back(&suffixes[r]);
    starts.push_back(prefixes[r]->depth());
    lengths.push_back(static_cast<int64_t>(suffixes[r].size()));
    scored.push_back(lengths.back());
  }
  PrefixScorerOptions options;
  options.cascade_min_prefix_len = cascade ? 0 : -1;
  ScoringStats stats;
  const int64_t width = *std::max_element(lengths.begin(), lengths.end());
  return forward_after(model, options, prefixes, make_batch(inputs, starts), last_positions(lengths, scored, width),
                       stats, kept)
      .logprobs;
}

TEST(PrefixStack, AKeptStackServesForwardsOverTheSamePrefixesInAnyOrder) {
  const Model model = Model::synthetic("tiny");
  const EntryPtr a = prefilled(model, counting(40, 0)), b = prefilled(model, counting(25, 5));
  const PrefixEntry *pa = a.get(), *pb = b.get();
  for (const bool cascade : {true, false}) {
    PrefixStack kept;
    const std::vector<const PrefixEntry*> rows{pa, pb, pa, pa, pb, pa, pa, pb};
    const at::Tensor first = after(model, rows, cascade, &kept);
    ASSERT_EQ(kept.prefixes.size(), 2u);
    const void* stacked = kept.layers.front().keys().data_ptr();
    // the same prefixes, taken in another order: the kept stack, not a new one, and the fresh stack's answers
    const std::vector<const PrefixEntry*> reordered{pb, pa, pb, pb, pa, pb, pa, pa};
    const at::Tensor second = after(model, reordered, cascade, &kept);
    EXPECT_EQ(kept.layers.front().keys().data_ptr(), stacked) << "cascade " << cascade;
    EXPECT_TRUE(second.equal(after(model, reordered, cascade, nullptr))) << "cascade " << cascade;
    EXPECT_TRUE(first.equal(after(model, rows, cascade, nullptr))) << "cascade " << cascade;
    // some of its prefixes, the longest among them: gather reads the kept stack, cascade (which attends to every
    // prefix of its stack) stacks them anew; the answers those prefixes give either way
    const std::vector<const PrefixEntry*> only_a(4, pa);
    const at::Tensor third = after(model, only_a, cascade, &kept);
    EXPECT_EQ(kept.prefixes.size(), cascade ? 1u : 2u) << "cascade " << cascade;
    EXPECT_EQ(kept.layers.front().keys().data_ptr() == stacked, !cascade) << "cascade " << cascade;
    EXPECT_TRUE(third.equal(after(model, only_a, cascade, nullptr))) << "cascade " << cascade;
    // a shorter prefix than the stack's longest: stacked anew (its rows would gather the longest's padding)
    const std::vector<const PrefixEntry*> only_b(4, pb);
    const at::Tensor fourth = after(model, only_b, cascade, &kept);
    EXPECT_EQ(kept.prefixes, std::vector<const PrefixEntry*>(1, pb)) << "cascade " << cascade;
    EXPECT_TRUE(fourth.equal(after(model, only_b, cascade, nullptr))) << "cascade " << cascade;
  }
}

// Gather makes a stack to keep only where it is at most a quarter of the rows' gathered prefixes (the forward budget
// counts those alone), and reads one kept already for more rows whatever its size; cascade reads the stack itself,
// so it always keeps it.
TEST(PrefixStack, GatherKeepsNoStackAsLargeAsItsRows) {
  const Model model = Model::synthetic("tiny");
  const EntryPtr a = prefilled(model, counting(40, 0)), b = prefilled(model, counting(25, 5));
  const std::vector<const PrefixEntry*> rows{a.get(), b.get(), a.get()};
  PrefixStack gathered, cascaded;
  const at::Tensor by_gather = after(model, rows, /*cascade=*/false, &gathered);
  EXPECT_TRUE(gathered.prefixes.empty());
  EXPECT_TRUE(by_gather.equal(after(model, rows, false, nullptr)));
  after(model, rows, /*cascade=*/true, &cascaded);
  EXPECT_EQ(cascaded.prefixes.size(), 2u);
  // kept for eight rows, then read by the three: their answers as before, and changed when the kept stack is
  // (so they came out of it)
  after(model, {a.get(), b.get(), a.get(), a.get(), b.get(), a.get(), a.get(), b.get()}, false, &gathered);
  ASSERT_EQ(gathered.prefixes.size(), 2u);
  const void* stacked = gathered.layers.front().keys().data_ptr();
  EXPECT_TRUE(after(model, rows, false, &gathered).equal(by_gather));
  EXPECT_EQ(gathered.layers.front().keys().data_ptr(), stacked);
  {
    const c10::InferenceMode inference;  // the stack was made in inference mode
    gathered.layers.front().keys().mul_(2);
  }
  EXPECT_FALSE(after(model, rows, false, &gathered).equal(by_gather));
}

}  // namespace
}  // namespace prefix_scorer::test
