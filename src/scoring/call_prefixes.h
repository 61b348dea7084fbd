#pragma once
// The shared prefixes of one call (loglikelihood or generate): the plan of its rows, the planned prefixes' life in
// the cache, and the prefill scheduler that makes them live before the rows that continue them run.

#include "prefix_scorer/model.h"
#include "scoring/batching.h"
#include "scoring/live_prefixes.h"
#include "scoring/prefill_scheduler.h"
#include "scoring/rows.h"

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace prefix_scorer {

class CallPrefixes {
 public:
  // Plans `rows` (prefixes_worth_caching, in windows of half the cache budget: room to prefill the next window's
  // prefixes ahead); prefilling counts in `stats`.
  CallPrefixes(const Model& model, const PrefixScorerOptions& options, const BatchMemory& memory, PrefixCache& cache,
               const std::vector<ScoringRow>& rows, ScoringStats& stats);

  const ScoringPlan& plan() const { return plan_; }
  LivePrefixes& live() { return live_; }

  // Before the planned rows plan.order[indices] run: their prefixes live and pinned (the missing ones prefilled),
  // then prefixes of the rows from `ahead` on prefilled into the room left.
  void prepare(const std::vector<size_t>& indices, size_t ahead);

  // The deepest live prefix of planned prefix `e`'s chain (-1: none); `e` itself unless the cache could not hold it.
  int64_t deepest_live(int64_t e) const;

  // After the rows plan.order[indices] ran: unpins, and lets go of the prefixes that no row left needs.
  void release(const std::vector<size_t>& indices);

  // Runs `hook` before each wave of prefills (to free what only the forwards between them use).
  void before_prefill(std::function<void()> hook) { before_prefill_ = std::move(hook); }

 private:
  const ScoringPlan plan_;
  LivePrefixes live_;
  std::function<void()> before_prefill_;
  PrefillScheduler scheduler_;
};

}  // namespace prefix_scorer
