#pragma once
// Tree packing: which planned prefixes run as one packed tree with their rows instead of a cache entry, and the
// segments a forward's rows are laid out in (one packed tree, or one row, each a segment of a forward row).

#include "model/forward_batch.h"
#include "scoring/batching.h"
#include "scoring/live_prefixes.h"
#include "scoring/rows.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace prefix_scorer {

// Which planned prefixes run as packed trees: those that no longer planned prefix continues (only their own rows
// share them), with 2 to tree_max_branches rows, whose tree fits max_batch_tokens.
std::vector<bool> tree_entries(const ScoringPlan& plan, const std::vector<ScoringRow>& rows,
                               const PrefixScorerOptions& options);

// A call's plan: find_shared_prefixes, less the nested entries that cost more than they save, with its tree_entries
// marked packed. A nested entry (one below another) that does not run as a packed tree is kept only when its own
// segment is at least min_prefix_len tokens: a shorter one saves a few tokens per row below it but costs a prefill
// wave of its own.
ScoringPlan prefixes_worth_caching(const std::vector<ScoringRow>& rows, const PrefixScorerOptions& options, int64_t window_tokens);

// One packed row of a forward: the rows of a packed prefix as one tree, or a single row.
struct ForwardSegment {
  int64_t tree = -1;          // the packed prefix, or -1 for a single row
  std::vector<size_t> order;  // its rows, as indices into plan.order
  int64_t after = -1;         // the cached prefix it runs after (-1: none)
  int64_t start = 0;          // that prefix's depth
  int64_t length = 0;         // the tokens it feeds from there on
  int64_t rope_variant = 0;   // of its rows
};

// The units of plan.order[indices], longest first (ties in plan order). `after_of(e)` names the cached prefix a
// unit whose rows continue planned prefix e (-1: none) runs after: e itself, or an ancestor where e is not
// cached. A packed prefix's rows run after its parent's, and its own tokens become the tree's trunk.
std::vector<ForwardSegment> forward_segments(LivePrefixes& prefixes, const std::vector<ScoringRow>& rows,
                               const std::vector<size_t>& indices, const std::function<int64_t(int64_t)>& after_of);

// One row of a forward: units one after another, each a segment of its own (see ForwardBatch::segment), all
// after the same cached prefix and of one rope variant.
struct RowLayout {
  std::vector<size_t> units;  // indices into the units
  int64_t length = 0;         // their tokens together
};

// The planned rows (indices into plan.order) of a forward's rows, laid out of `units`.
std::vector<size_t> rows_of(const std::vector<ForwardSegment>& units, const std::vector<RowLayout>& forward);

// The forwards that run `units` (longest first), each as its rows, within the batch budgets as cut_batches
// cuts them: a forward is as wide as its longest unit, and each further row starts with the longest unit left.
// With options.pack_rows, each row is then filled with the longest units left after the same cached prefix that
// fit in the width it has left, instead of padding.
std::vector<std::vector<RowLayout>> lay_out_forwards(const std::vector<ForwardSegment>& units,
                                                    const PrefixScorerOptions& options, const BatchMemory& memory);

}  // namespace prefix_scorer
