#pragma once
// Rolling scoring windows: a continuation longer than the model's context scored in pieces, each after as much of
// the text before it as fits (lm-evaluation-harness's rolling windows for loglikelihood_rolling, and Evalution's long
// continuations). Not the sliding attention windows of a model's layers (ModelConfig::sliding_window).

#include "prefix_scorer/types.h"

#include <vector>

namespace prefix_scorer {

// (context, continuation) requests that score `target` after `context` in pieces of at most max_length tokens, in
// order, each after the latest max_length + 1 - (its length) tokens of context + target before it (all there are,
// when fewer). Their continuations tile `target`; none for an empty one.
std::vector<Request> windows_after(const TokenIds& context, const TokenIds& target, int64_t max_length);

// The disjoint windows lm-eval scores a document with (get_rolling_token_windows with context_len 1, then
// make_disjoint_window): the windows of `document` after `prefix_token` alone.
std::vector<Request> rolling_windows(const TokenIds& document, int64_t prefix_token, int64_t max_length);

}  // namespace prefix_scorer
