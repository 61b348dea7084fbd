#pragma once
// lm-evaluation-harness's rolling windows for loglikelihood_rolling (perplexity).

#include "prefix_scorer/types.h"

#include <vector>

namespace prefix_scorer {

// The disjoint windows lm-eval scores a document with (get_rolling_token_windows with context_len 1, then
// make_disjoint_window): the first predicts up to max_length tokens from `prefix_token`; each later one predicts
// the next up to max_length tokens with as much preceding text as fits. Their continuations tile the document.
std::vector<Request> rolling_windows(const TokenIds& document, int64_t prefix_token, int64_t max_length);

}  // namespace prefix_scorer
