#pragma once
// The planned prefixes of one loglikelihood call and their life in the cache: which are live, pinned, still
// needed; hits and misses counted once each.

#include "scoring/planner.h"
#include "scoring/prefix_cache.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace prefix_scorer {

// One planned prefix's state during a call.
struct PrefixState {
  std::weak_ptr<PrefixEntry> live;  // its cache entry while the call holds it
  int64_t pending = 0;              // rows and child prefixes of the call still to run
  bool uncacheable = false;         // larger than the whole cache budget: never prefilled
  bool seen = false;                // counted already, as a hit or as a miss
};

class LivePrefixes {
 public:
  LivePrefixes(const ScoringPlan& plan, PrefixCache& cache, bool keep_cache, ScoringStats& stats);
  // Unpins what an interrupted batch left pinned, and drops the call's entries unless they are to be kept.
  ~LivePrefixes();
  LivePrefixes(const LivePrefixes&) = delete;
  LivePrefixes& operator=(const LivePrefixes&) = delete;

  const ScoringPlan& plan() const { return plan_; }
  PrefixCache& cache() { return cache_; }
  PrefixState& state(int64_t e) { return states_[e]; }
  int64_t depth(int64_t e) const { return e < 0 ? 0 : plan_.entries[e].depth(); }

  // The live entry of prefix `e`, looked up in the cache (kept from an earlier call) when the call has not made
  // it live yet; null when neither has it. A first find counts a hit.
  EntryPtr lookup(int64_t e);
  // The entry the call holds for `e` now, without a cache lookup.
  EntryPtr held(int64_t e) const { return states_[e].live.lock(); }
  // Prefix `e` freshly prefilled: into the cache (which must have room), pinned, live; counts a miss.
  void add(int64_t e, EntryPtr entry);

  // Pins last until unpin(): a pinned entry is never evicted.
  void pin(const EntryPtr& entry);
  void unpin();

  // A row of prefix `e` is done: prefixes no pending row needs any more leave the call (and the cache, unless
  // entries are kept), ancestors too once their last child is gone.
  void finish(int64_t e);

 private:
  const ScoringPlan& plan_;
  PrefixCache& cache_;
  const bool keep_cache_;
  ScoringStats& stats_;
  std::vector<PrefixState> states_;
  std::vector<EntryPtr> pinned_;
};

}  // namespace prefix_scorer
