#include "scoring/live_prefixes.h"

#include <stdexcept>
#include <utility>

namespace prefix_scorer {

LivePrefixes::LivePrefixes(const ScoringPlan& plan, PrefixCache& cache, bool keep_cache, ScoringStats& stats)
    : plan_(plan), cache_(cache), keep_cache_(keep_cache), stats_(stats), states_(plan.entries.size()) {
  for (const auto& entry : plan.entries) {
    if (entry.parent >= 0) ++states_[entry.parent].pending;
  }
  for (const auto& row : plan.order) {
    if (row.entry >= 0) ++states_[row.entry].pending;
  }
}

LivePrefixes::~LivePrefixes() {
  unpin();
  for (auto it = states_.rbegin(); it != states_.rend(); ++it) {  // children before parents
    if (auto entry = it->live.lock(); entry && !keep_cache_) cache_.erase(entry);
  }
}

EntryPtr LivePrefixes::lookup(int64_t e) {
  PrefixState& s = states_[e];
  if (EntryPtr entry = s.live.lock()) return entry;
  EntryPtr found = cache_.find(plan_.entries[e].tokens, plan_.entries[e].rope_variant);
  if (found) {
    s.live = found;
    stats_.cache_hits += s.seen ? 0 : 1;
    s.seen = true;
  }
  return found;
}

void LivePrefixes::add(int64_t e, EntryPtr entry) {
  if (!cache_.insert(entry))
    throw std::logic_error("prefix cache refused an entry it had room for");  // the scheduler checked the room
  pin(entry);
  states_[e].live = entry;
  states_[e].seen = true;
  stats_.cache_misses += 1;
}

void LivePrefixes::pin(const EntryPtr& entry) {
  ++entry->pins;
  pinned_.push_back(entry);
}

void LivePrefixes::unpin() {
  for (auto& entry : pinned_) --entry->pins;
  pinned_.clear();
}

void LivePrefixes::finish(int64_t e) {
  while (e >= 0 && --states_[e].pending == 0) {
    if (EntryPtr entry = states_[e].live.lock(); entry && !keep_cache_) cache_.erase(entry);
    states_[e].live.reset();
    e = plan_.entries[e].parent;
  }
}

}  // namespace prefix_scorer
