#pragma once
// Runs planned forwards of rows after their live prefixes: each row (or packed tree of rows) from the end of its
// planned prefix, or of the deepest prefix of its chain that is live where the cache could not hold that one;
// scores land in the caller's order.

#include "scoring/batching.h"
#include "scoring/call_prefixes.h"
#include "prefix_scorer/model.h"
#include "scoring/forward_segments.h"
#include "scoring/prefix_kv.h"
#include "scoring/rows.h"

#include <vector>

namespace prefix_scorer {

class SuffixRunner {
 public:
  SuffixRunner(const Model& model, const PrefixScorerOptions& options, const BatchMemory& memory,
               CallPrefixes& prefixes, const std::vector<ScoringRow>& rows, const std::vector<Request>& requests,
               ScoringResult& result)
      : model_(model), options_(options), memory_(memory), prefixes_(prefixes), rows_(rows), requests_(requests),
        result_(result) {}

  // Runs one planned forward: `rows` laid out of `units`, whose prefixes are prepared. Where a unit's prefix is not
  // live (the cache could not hold it), its rows run a longer suffix after a live ancestor, counted in
  // stats.fallbacks, and the forward's rows are laid out again under the budgets for that.
  void run(const std::vector<ForwardSegment>& units, const std::vector<RowLayout>& rows);

  // Lets go of the last forwards' stack of prefixes (PrefixStack) and of their entries: before any prefill, so that
  // a kept stack never holds memory while other prefixes are made.
  void drop_stack();

 private:
  void run_forward(const std::vector<ForwardSegment>& units, const std::vector<RowLayout>& rows);

  const Model& model_;
  const PrefixScorerOptions& options_;
  const BatchMemory& memory_;
  CallPrefixes& prefixes_;
  const std::vector<ScoringRow>& rows_;
  const std::vector<Request>& requests_;
  ScoringResult& result_;
  PrefixStack stack_;
  std::vector<EntryPtr> stack_entries_;  // held while stack_ is: no other entry takes their addresses
};

}  // namespace prefix_scorer
