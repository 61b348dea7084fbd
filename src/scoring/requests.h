#pragma once
// Checks on requests and options, and the lm-evaluation-harness input window of a request.

#include "model/model_config.h"
#include "prefix_scorer/types.h"

#include <string>
#include <vector>

namespace prefix_scorer {

// Throws std::invalid_argument "<where> token <position> is id <id>, outside the vocabulary" for the first id
// outside [0, vocab_size).
void check_token_ids(const TokenIds& ids, int64_t vocab_size, const std::string& where);

// Throws std::invalid_argument naming the first request that is empty or holds an id outside [0, vocab_size).
void validate_requests(const std::vector<Request>& requests, int64_t vocab_size);

// Throws std::invalid_argument for a negative or absurd option, or a max_length past the learned positions of
// a model that has them (gpt2).
void validate_options(const ScoringOptions& options, const ModelConfig& config);

// What a forward sees for one request: (context + continuation)[-(max_length + 1):][:-1], and the
// continuation tokens it predicts at its last positions.
struct ScoringWindow {
  TokenIds input;
  TokenIds targets;
  bool truncated = false;
};

// Throws std::invalid_argument (naming `index`) when the continuation is longer than max_length.
ScoringWindow scoring_window(const Request& request, int64_t max_length, size_t index);

}  // namespace prefix_scorer
