#pragma once
// A call's counters: added to the running totals, and the host-device copies and syncs it made.

#include "model/host_transfers.h"
#include "prefix_scorer/types.h"

namespace prefix_scorer {

// Adds a call's counters to the totals; the cache's size is a state, not a count, and peak is a maximum.
void add_stats(ScoringStats& total, const ScoringStats& s);

// Adds to `stats` the copies and syncs this thread made since `before` (every call counts its own).
void add_transfers_since(const TransferCounts& before, ScoringStats& stats);

}  // namespace prefix_scorer
