#pragma once
// Runs planned rows after their live prefixes: each row (or packed tree of rows) from the end of the deepest
// prefix of its chain that is live, in batches sorted by length under the batch budgets; scores land in the
// caller's order.

#include "scoring/batching.h"
#include "scoring/live_prefixes.h"
#include "prefix_scorer/model.h"
#include "scoring/forward_segments.h"
#include "scoring/rows.h"

#include <vector>

namespace prefix_scorer {

class SuffixRunner {
 public:
  SuffixRunner(const Model& model, const PrefixScorerOptions& options, const BatchMemory& memory,
               LivePrefixes& prefixes, const std::vector<ScoringRow>& rows, const std::vector<Request>& requests,
               ScoringResult& result)
      : model_(model), options_(options), memory_(memory), prefixes_(prefixes), rows_(rows), requests_(requests),
        result_(result) {}

  // Scores the planned rows plan.order[indices]. A row whose planned prefix is not live (the cache could not hold
  // it) runs a longer suffix after a live ancestor, counted in stats.fallbacks; the rows are re-split under the
  // budgets for that.
  void run(const std::vector<size_t>& indices);

 private:
  void run_batch(const std::vector<ForwardSegment>& units, const std::vector<RowLayout>& rows);

  const Model& model_;
  const PrefixScorerOptions& options_;
  const BatchMemory& memory_;
  LivePrefixes& prefixes_;
  const std::vector<ScoringRow>& rows_;
  const std::vector<Request>& requests_;
  ScoringResult& result_;
};

}  // namespace prefix_scorer
