// A call stopped part way, by cancel() or by an error thrown between forwards, leaves the scorer as after a
// finished call: nothing pinned, the cache within its budget (and empty without keep_cache), the next call exact.

#include "model/fault_injection.h"
#include "prefix_scorer/errors.h"
#include "test_support.h"

#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>

namespace prefix_scorer::test {
namespace {

// Three subjects of a 40-token prefix with six one-token-choice questions each, two rows a forward.
std::vector<Request> workload() {
  std::vector<Request> requests;
  for (int64_t s = 0; s < 3; ++s) {
    TokenIds prefix;
    for (int64_t i = 0; i < 40; ++i) prefix.push_back((s * 97 + i * 13) % 480 + 10);
    for (int64_t q = 0; q < 6; ++q) {
      TokenIds context = prefix;
      for (int64_t i = 0; i < 5 + q; ++i) context.push_back((q * 31 + i * 7 + s) % 480 + 10);
      for (int64_t c = 0; c < 4; ++c) requests.push_back({context, {c + 3}});
    }
  }
  return requests;
}

PrefixScorerOptions two_rows_a_forward(bool keep_cache) {
  PrefixScorerOptions o;
  o.max_batch_rows = 2;
  o.keep_cache = keep_cache;
  o.tree_max_branches = 0;  // the questions are cache entries: a stopped call leaves some behind
  o.max_cache_bytes = int64_t{1} << 20;
  return o;
}

// After a call that threw: nothing pinned, the cache within its budget (and empty without keep_cache), and the
// next call gives the plain numbers.
void expect_sound_after_failure(PrefixScorer& scorer, const PrefixScorerOptions& options, const Model& model,
                                const std::vector<Request>& requests) {
  const ScoringStats after = scorer.stats();
  EXPECT_EQ(after.entries_pinned, 0);
  if (!options.keep_cache) EXPECT_EQ(after.entries_held, 0);
  EXPECT_LE(after.bytes_held, options.max_cache_bytes);

  const ScoringResult next = scorer.loglikelihood(requests);
  EXPECT_EQ(next.stats.entries_pinned, 0);
  const ScoringResult plain = score_plain(model, requests);
  expect_same_scores(next.scores, plain.scores, "the call after the failure");
}

// Runs a call whose `nth` progress report does `stop`, expects it to throw E and the scorer to be sound after.
template <typename E>
void expect_stopped_cleanly(bool keep_cache, int nth, const std::function<void(PrefixScorer&)>& stop) {
  const Model model = Model::load(model_dir("llama3"));
  const auto shared = std::make_shared<const Model>(model);
  const auto requests = workload();
  PrefixScorer* self = nullptr;
  int reports = 0;
  PrefixScorerOptions options = two_rows_a_forward(keep_cache);
  options.on_progress = [&](int64_t, int64_t) {
    if (++reports == nth) stop(*self);
  };
  PrefixScorer scorer(shared, options);
  self = &scorer;
  EXPECT_THROW(scorer.loglikelihood(requests), E);
  EXPECT_EQ(reports, nth);  // stopped before the next forward
  expect_sound_after_failure(scorer, options, model, requests);
}

TEST(Cancel, ACancelledCallThrowsAndTheNextIsExact) {
  for (const bool keep : {false, true}) expect_stopped_cleanly<Cancelled>(keep, 3, [](PrefixScorer& s) { s.cancel(); });
}

TEST(Cancel, CancelWithNoCallInFlightDoesNothing) {
  const auto model = std::make_shared<const Model>(Model::load(model_dir("llama3")));
  PrefixScorer scorer(model, two_rows_a_forward(false));
  scorer.cancel();
  EXPECT_EQ(scorer.loglikelihood(workload()).scores.size(), workload().size());
}

TEST(Faults, AnOutOfMemoryErrorBetweenForwardsPropagatesWithItsType) {
  for (const bool keep : {false, true}) {
    expect_stopped_cleanly<c10::OutOfMemoryError>(keep, 2, [](PrefixScorer&) {
      throw c10::OutOfMemoryError({__func__, __FILE__, static_cast<uint32_t>(__LINE__)}, "injected out of memory");
    });
  }
}

TEST(Faults, APlainErrorBetweenForwardsPropagates) {
  for (const bool keep : {false, true})
    expect_stopped_cleanly<std::runtime_error>(keep, 4, [](PrefixScorer&) { throw std::runtime_error("injected"); });
}

// Every forward of the call in turn, prefill waves and suffix batches alike, throws inside the model; the error
// keeps its type and says which forward it was.
template <typename E>
void expect_each_forward_fault_handled(testing::ForwardFault fault) {
  const Model model = Model::load(model_dir("llama3"));
  const auto shared = std::make_shared<const Model>(model);
  const auto requests = workload();
  const int64_t forwards = PrefixScorer(shared, two_rows_a_forward(false)).loglikelihood(requests).stats.forwards;
  ASSERT_GT(forwards, 3);
  for (const bool keep : {false, true}) {
    for (int64_t nth = 1; nth <= forwards; ++nth) {
      SCOPED_TRACE(fmt::format("keep_cache {}, forward {} of {}", keep, nth, forwards));
      const PrefixScorerOptions options = two_rows_a_forward(keep);
      PrefixScorer scorer(shared, options);
      testing::fail_forward(nth, fault);
      const std::string message = message_of<E>([&] { scorer.loglikelihood(requests); });
      testing::fail_forward(0, fault);
      EXPECT_NE(message.find("injected"), std::string::npos) << message;
      EXPECT_NE(message.find("in a forward of"), std::string::npos) << message;
      expect_sound_after_failure(scorer, options, model, requests);
    }
  }
}

TEST(Faults, AnOutOfMemoryErrorInsideAnyForwardLeavesTheScorerSound) {
  expect_each_forward_fault_handled<c10::OutOfMemoryError>(testing::ForwardFault::out_of_memory);
}

TEST(Faults, ATorchErrorInsideAnyForwardLeavesTheScorerSound) {
  expect_each_forward_fault_handled<c10::Error>(testing::ForwardFault::torch_error);
}

TEST(Faults, ADisarmedFaultNeverFires) {
  const auto model = std::make_shared<const Model>(Model::load(model_dir("llama3")));
  testing::fail_forward(1, testing::ForwardFault::torch_error);
  testing::fail_forward(0, testing::ForwardFault::torch_error);
  EXPECT_EQ(PrefixScorer(model, two_rows_a_forward(false)).loglikelihood(workload()).scores.size(), workload().size());
}

}  // namespace
}  // namespace prefix_scorer::test
