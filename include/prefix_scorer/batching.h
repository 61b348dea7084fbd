#pragma once
// Splitting length-sorted rows into forwards under a token budget, and building right-padded batches.

#include "prefix_scorer/model.h"
#include "prefix_scorer/types.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace prefix_scorer {

// Half-open [begin, end) ranges over rows sorted by descending length: each range holds at most `max_rows` rows
// and at most `max_tokens` padded tokens (rows x first row's length), and at least one row.
std::vector<std::pair<size_t, size_t>> plan_batches(const std::vector<int64_t>& lengths_descending,
                                                    int64_t max_tokens, int64_t max_rows);

// A right-padded batch of `rows`; row i's tokens sit at positions start_positions[i], start_positions[i] + 1, ...
// Padding repeats the row's last position (so a padded query always sees the row's keys) and is marked invalid.
ForwardBatch make_batch(const std::vector<const TokenIds*>& rows, const std::vector<int64_t>& start_positions);

// Flat indices (row * width + position) of the last scored[i] positions of each row of lengths[i] tokens.
at::Tensor last_positions(const std::vector<int64_t>& lengths, const std::vector<int64_t>& scored, int64_t width);

// Adds one forward of `batch` to the forward, token and padding counts; returns its real tokens.
int64_t count_forward(const ForwardBatch& batch, ScoringStats& stats);

}  // namespace prefix_scorer
