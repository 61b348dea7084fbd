#pragma once
// Finds the token prefixes that rows share and decides which ones get a KV cache entry.

#include "scoring/rows.h"

#include <cstdint>
#include <vector>

namespace prefix_scorer {

// A prefix to cache: tokens [0, depth) of its rows. Its KV segment holds only [parent's depth, depth): the part
// its parent entry (a shorter shared prefix) does not hold already.
struct PrefixEntryPlan {
  int64_t parent = -1;  // index into ScoringPlan::entries, -1 for none
  TokenIds tokens;      // the whole prefix [0, depth)
  int64_t rope_variant = 0;  // its rows' (rows of two variants never share an entry)
  bool packed = false;       // runs as one packed tree with its rows instead of a cache entry: never prefilled
  int64_t depth() const { return static_cast<int64_t>(tokens.size()); }
};

// A row and the deepest cached prefix it starts after (-1: it runs from position 0).
struct PlannedRow {
  size_t row = 0;
  int64_t entry = -1;
};

struct ScoringPlan {
  std::vector<PrefixEntryPlan> entries;  // parents before children
  std::vector<PlannedRow> order;         // rows in scoring order (see find_shared_prefixes)
  std::vector<size_t> window_ends;       // where each window of `order` ends; a batch never spans two
};

// Builds the radix tree of the rows' inputs (by sorting them, rope variant first, and taking longest common prefixes
// of neighbours of one variant: a prefix's keys differ between variants).
// A tree node becomes an entry when at least two rows share it and it is at least `min_prefix_len` tokens deep.
// An entry never covers a scored position of its rows: its depth is cut to the first scored position of the
// earliest-scoring row below it (so a row's scored positions are always computed in its suffix).
// Rows are ordered subtree by subtree, in windows of consecutive subtrees whose prefix segments add up to at most
// `window_tokens` (at least one subtree each); within a window, longest suffix first, so that batches pad little
// while only one window's prefixes need to be cached at a time.
ScoringPlan find_shared_prefixes(const std::vector<ScoringRow>& rows, int64_t min_prefix_len, int64_t window_tokens);

// Removes the entries `drop` marks: their rows and children continue their nearest kept ancestor instead.
void drop_entries(ScoringPlan& plan, const std::vector<bool>& drop);

}  // namespace prefix_scorer
