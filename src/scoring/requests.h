#pragma once
// Checks on requests and options, and the lm-evaluation-harness input window of a request.

#include "model/config/model_config.h"
#include "prefix_scorer/types.h"

#include <string>
#include <vector>

namespace prefix_scorer {

// Throws std::invalid_argument "<where> token <position> is id <id>, outside <range> [0, limit)" for the first id
// outside [0, limit).
void check_token_ids(const TokenIds& ids, int64_t limit, const std::string& where,
                     const char* range = "the vocabulary");

// Throws std::invalid_argument naming the first request that is empty, holds an id outside [0, vocab_size), or a
// continuation id past the output layer's rows (output_vocab: fewer where the head is pruned).
void validate_requests(const std::vector<Request>& requests, int64_t vocab_size, int64_t output_vocab);

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
// Throws, naming `what`, when `tokens` fed in one row exceed the model's dense_attention_limit (sparse or chunked
// attention served as dense).
// `remedy` says what would bring it within.
void check_dense_attention_limit(const ModelConfig& config, int64_t tokens, const std::string& what,
                                 const std::string& remedy);

ScoringWindow scoring_window(const Request& request, int64_t max_length, size_t index);

}  // namespace prefix_scorer
