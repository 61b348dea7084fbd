#pragma once
// LongRoPE models take their long factors for a forward longer than original_max_position_embeddings, as
// transformers picks them for a sequence scored alone. Requests that long are scored apart from the others,
// through the model with those factors: the one place both the scorer and the plain path split them.

#include "prefix_scorer/model.h"
#include "prefix_scorer/types.h"

#include <functional>
#include <vector>

namespace prefix_scorer {

using ProgressHook = std::function<void(int64_t done, int64_t total)>;
// Scores one part through `model` (with the long factors when `long_rope`), reporting progress to `on_progress`.
using PartScorer = std::function<ScoringResult(const Model& model, bool long_rope, const std::vector<Request>& part,
                                               const ProgressHook& on_progress)>;

// Splits `requests` by the factors their forward within `max_length` takes, scores each non-empty part (short
// first) with `score_part`, and returns the scores in the caller's order with the parts' counters added up;
// `on_progress` (may be empty) sees one count over both parts. Without longrope, or when `long_model` is null,
// one part of all. Throws std::invalid_argument for bad requests before any part runs. Every call of either path
// passes here, so the call's host-device copies and syncs are counted here too (stats.host_copies, host_syncs).
ScoringResult score_by_rope_factors(const Model& model, const Model* long_model, const std::vector<Request>& requests,
                                    int64_t max_length, const ProgressHook& on_progress, const PartScorer& score_part);

// Adds a call's counters to the totals; the cache's size is a state, not a count, and peak is a maximum.
void add_stats(ScoringStats& total, const ScoringStats& s);

}  // namespace prefix_scorer
