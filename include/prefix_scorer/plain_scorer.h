#pragma once
// The reference path: one full forward over context + continuation[:-1] per request.

#include "prefix_scorer/model.h"
#include "prefix_scorer/types.h"

#include <vector>

namespace prefix_scorer {

// Variants of the reference path that the benchmark compares; none changes a number.
struct PlainPathOptions {
  bool share_identical = false;        // one row per distinct input, as lm-evaluation-harness groups requests
  bool project_all_positions = false;  // log-probs for every position, as lm-eval's HF backend computes them
};

// Scores every request, batched with right padding and sorted by length. Throws std::invalid_argument naming
// the request for bad input before any compute; returns nothing partial.
ScoringResult score_plain(const Model& model, const std::vector<Request>& requests,
                          const ScoringOptions& options = {}, const PlainPathOptions& path = {});

}  // namespace prefix_scorer
