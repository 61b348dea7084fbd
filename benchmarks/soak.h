#pragma once
// A soak run: many random workloads (random prefix trees, budgets and thread counts) scored by PrefixScorer and by
// the plain path on one model, with the process's resident memory sampled along the way.

#include "prefix_scorer/model.h"

#include <cstdint>
#include <memory>

namespace prefix_scorer::bench {

struct SoakReport {
  int64_t workloads = 0;
  int64_t requests = 0;
  int64_t mismatches = 0;  // scores off the plain path's by more than 1e-4, or with another is_greedy
  double rss_start_mib = 0, rss_warm_mib = 0, rss_end_mib = 0;  // before, after the first tenth, at the end
};

// Prints a line per tenth of the run on stderr.
SoakReport soak(const std::shared_ptr<const Model>& model, int64_t workloads, uint64_t seed);

}  // namespace prefix_scorer::bench
