#pragma once
// Which planned prefixes to make live before a batch runs, in which prefill waves, within which budgets.

#include "scoring/batching.h"
#include "scoring/live_prefixes.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace prefix_scorer {

class PrefillScheduler {
 public:
  // Computes one wave of prefixes (parents live already) and makes each live through LivePrefixes::add.
  using RunWave = std::function<void(const std::vector<int64_t>& wave)>;

  PrefillScheduler(LivePrefixes& prefixes, const PrefixScorerOptions& options, const BatchMemory& memory,
                   RunWave run_wave)
      : prefixes_(prefixes), options_(options), memory_(memory), run_wave_(std::move(run_wave)) {}

  // Makes the prefixes `needed` by the rows about to run (and their ancestors) live and pinned, prefilling the
  // missing ones first; then, with the room left, prefills missing prefixes of the planned rows from
  // `lookahead_from` on, up to prefill_batch of them.
  void prepare(const std::vector<int64_t>& needed, size_t lookahead_from);

  // Prefills `missing` (parents listed before children) in waves whose parents are live, each wave within
  // prefill_batch, max_batch_tokens, max_batch_bytes and what the cache can hold (evicting only when
  // `may_evict`). A prefix that does not fit now is skipped (its rows fall back to a shorter prefix; a later
  // batch tries again); one larger than the whole cache budget, for good (PrefixState::uncacheable).
  void prefill(std::vector<int64_t> missing, bool may_evict);

 private:
  LivePrefixes& prefixes_;
  const PrefixScorerOptions& options_;
  const BatchMemory& memory_;
  RunWave run_wave_;
};

// The RunWave of a real model: one forward of the wave's segments after their parents, each segment's keys and
// values kept as a new cache entry.
void prefill_wave(const Model& model, const PrefixScorerOptions& options, LivePrefixes& prefixes,
                  const std::vector<int64_t>& wave, ScoringStats& stats);

}  // namespace prefix_scorer
