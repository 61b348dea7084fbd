#include "scoring/call_stats.h"

#include <algorithm>

namespace prefix_scorer {

void add_stats(ScoringStats& total, const ScoringStats& s) {
  for (const StatsField& f : stats_fields()) {
    if (f.member == &ScoringStats::entries_held || f.member == &ScoringStats::bytes_held ||
        f.member == &ScoringStats::entries_pinned)
      continue;
    total.*f.member = f.member == &ScoringStats::peak_bytes ? std::max(total.*f.member, s.*f.member)
                                                             : total.*f.member + s.*f.member;
  }
}

void add_transfers_since(const TransferCounts& before, ScoringStats& stats) {
  stats.host_copies += thread_transfers().copies - before.copies;
  stats.host_syncs += thread_transfers().syncs - before.syncs;
  stats.bytes_to_device += thread_transfers().bytes_to_device - before.bytes_to_device;
  stats.bytes_to_host += thread_transfers().bytes_to_host - before.bytes_to_host;
}

}  // namespace prefix_scorer
