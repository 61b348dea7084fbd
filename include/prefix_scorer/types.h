#pragma once
// Plain structs passed between the units: requests in, scores and statistics out.

#include <cstdint>
#include <vector>

namespace prefix_scorer {

using TokenIds = std::vector<int64_t>;

// One loglikelihood request: the continuation's tokens are scored given the context's.
struct Request {
  TokenIds context;       // must not be empty: callers put a prefix token (BOS) there for an empty context
  TokenIds continuation;  // must not be empty
};

// The summed log-probability of a request's continuation, and whether every continuation token is the argmax.
struct Score {
  double logprob = 0.0;
  bool is_greedy = false;
};

struct ScoringOptions {
  // Inputs longer than max_length + 1 tokens keep their last max_length + 1 (lm-evaluation-harness truncation).
  // 0 takes the model's max_position_embeddings.
  int64_t max_length = 0;
  // Upper bound on padded tokens (rows x longest row) in one forward; a longer single row still runs alone.
  int64_t max_batch_tokens = 8192;
  // Upper bound on rows in one forward.
  int64_t max_batch_rows = 64;
};

struct ScoringStats {
  int64_t requests = 0;
  int64_t forwards = 0;         // model forward calls
  int64_t tokens_computed = 0;  // real tokens fed to the model
  int64_t padding_tokens = 0;   // padding fed alongside them
  int64_t scored_rows = 0;      // positions projected through lm_head
  int64_t truncated = 0;        // requests left-truncated to max_length + 1
};

struct ScoringResult {
  std::vector<Score> scores;  // in the caller's order
  ScoringStats stats;
};

}  // namespace prefix_scorer
