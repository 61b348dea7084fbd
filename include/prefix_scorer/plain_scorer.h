#pragma once
// The reference path: one full forward over context + continuation[:-1] per request.

#include "prefix_scorer/model.h"
#include "prefix_scorer/types.h"

#include <vector>

namespace prefix_scorer {

// Scores every request, batched with right padding and sorted by length. Throws std::invalid_argument naming
// the request for bad input before any compute; returns nothing partial.
ScoringResult score_plain(const Model& model, const std::vector<Request>& requests,
                          const ScoringOptions& options = {});

}  // namespace prefix_scorer
