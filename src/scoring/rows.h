#pragma once
// Forward rows: the token sequences a forward runs, and how requests read their scores from them.

#include "model/config/model_config.h"
#include "prefix_scorer/types.h"

#include <ATen/ATen.h>

#include <vector>

namespace prefix_scorer {

// One sequence to run: the last `scored` positions are projected, and each request listed reads its continuation's
// log-probabilities from the last `continuation.size()` of them.
struct ScoringRow {
  TokenIds input;
  int64_t scored = 0;
  std::vector<size_t> requests;
  int64_t rope_variant = 0;  // ModelConfig::rope_variant of the whole input: its prefixes' keys rotate by it too
};

// Checks the requests and cuts each to its lm-evaluation-harness window of `config.window(max_length)` tokens
// (see scoring_window); requests whose windows are identical share one row when `share_identical` (the grouping
// lm-eval does). Throws std::invalid_argument naming the first bad request. `truncated` counts the windows that
// were cut.
std::vector<ScoringRow> make_rows(const std::vector<Request>& requests, const ModelConfig& config, int64_t max_length,
                                  bool share_identical, int64_t& truncated);

// Sets the scores of the requests of `rows` from `logprobs` [sum of the rows' `scored`, vocab], laid out row after
// row in the order given.
void gather_scores(const at::Tensor& logprobs, const std::vector<const ScoringRow*>& rows,
                   const std::vector<Request>& requests, std::vector<Score>& scores);

}  // namespace prefix_scorer
