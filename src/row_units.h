#pragma once
// Tree packing: which planned prefixes run as one packed tree with their rows instead of a cache entry, and the
// units a forward's rows come in (one packed tree, or one row).

#include "batching.h"
#include "live_prefixes.h"
#include "rows.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace prefix_scorer {

// Marks PrefixState::packed on every planned prefix that no longer planned prefix continues (only its own rows
// share it), with 2 to tree_max_branches rows, whose tree fits max_batch_tokens. Returns how many.
int64_t mark_trees(LivePrefixes& prefixes, const std::vector<ScoringRow>& rows, const PrefixScorerOptions& options);

// One packed row of a forward: the rows of a packed prefix as one tree, or a single row.
struct RowUnit {
  int64_t tree = -1;          // the packed prefix, or -1 for a single row
  std::vector<size_t> order;  // its rows, as indices into plan.order
  int64_t after = -1;         // the cached prefix it runs after (-1: none)
  int64_t start = 0;          // that prefix's depth
  int64_t length = 0;         // the tokens it feeds from there on
};

// The units of plan.order[indices], longest first (ties in plan order). `after_of(e)` names the cached prefix a
// unit whose rows continue planned prefix e (-1: none) runs after: e itself, or an ancestor where e is not
// cached. A packed prefix's rows run after its parent's, and its own tokens become the tree's trunk.
std::vector<RowUnit> row_units(LivePrefixes& prefixes, const std::vector<ScoringRow>& rows,
                               const std::vector<size_t>& indices, const std::function<int64_t(int64_t)>& after_of);

// Ranges [begin, end) of `units` (longest first) forming forwards within the batch budgets (see plan_batches).
std::vector<std::pair<size_t, size_t>> plan_unit_batches(const std::vector<RowUnit>& units,
                                                         const PrefixScorerOptions& options, const BatchMemory& memory);

}  // namespace prefix_scorer
