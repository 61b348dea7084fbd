#include "scoring/call_prefixes.h"

#include "scoring/forward_segments.h"

#include <algorithm>

namespace prefix_scorer {

CallPrefixes::CallPrefixes(const Model& model, const PrefixScorerOptions& options, const BatchMemory& memory,
                           PrefixCache& cache, const std::vector<ScoringRow>& rows, ScoringStats& stats)
    : plan_(prefixes_worth_caching(rows, options,
                                   std::max<int64_t>(1, options.max_cache_bytes / 2 /
                                                            std::max<int64_t>(1, memory.kv_bytes_per_token)))),
      live_(plan_, cache, options.keep_cache, stats),
      scheduler_(live_, options, memory, [&model, &options, &stats, this](const std::vector<int64_t>& wave) {
        if (before_prefill_) before_prefill_();
        prefill_wave(model, options, live_, wave, stats);
      }) {}

void CallPrefixes::prepare(const std::vector<size_t>& indices, size_t ahead) {
  std::vector<int64_t> needed;  // a packed prefix's chain is prepared without it (the scheduler skips it)
  for (size_t k : indices) needed.push_back(plan_.order[k].entry);
  scheduler_.prepare(needed, ahead);
}

int64_t CallPrefixes::deepest_live(int64_t e) const {
  while (e >= 0 && !live_.held(e)) e = plan_.entries[e].parent;
  return e;
}

void CallPrefixes::release(const std::vector<size_t>& indices) {
  live_.unpin();
  for (size_t k : indices) live_.finish(plan_.order[k].entry);
}

}  // namespace prefix_scorer
