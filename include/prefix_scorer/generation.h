#pragma once
// Generation requests and results: PrefixScorer::generate continues each prompt until a stop, with the prompts'
// shared prefixes prefilled once and rows joining and leaving the running batch as they start and stop.

#include "prefix_scorer/types.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace prefix_scorer {

// How a row picks its next token: greedy (the argmax, as HF generate with do_sample=False), or sampled from the
// softmax of the log-probabilities divided by `temperature`, kept to the `top_k` likeliest tokens (0: all) and to
// the smallest set whose probability reaches `top_p` (1: all). A request's draws come from its own generator
// seeded with `seed`, so they do not depend on the batch it runs in.
struct SamplingOptions {
  bool greedy = true;
  double temperature = 1.0;
  int64_t top_k = 0;
  double top_p = 1.0;
  uint64_t seed = 0;
};

struct GenerationRequest {
  TokenIds prompt;               // must not be empty
  int64_t max_new_tokens = 256;  // at least 1
  TokenIds stop_ids;             // a generated id among them ends the row (and is part of its tokens)
  SamplingOptions sampling;
};

enum class FinishReason { kStopId, kMaxNewTokens, kStopHook };

struct Generation {
  TokenIds tokens;               // the new tokens, the stopping one included
  std::vector<double> logprobs;  // each new token's log-probability (fp32 log-softmax of its position)
  FinishReason finish = FinishReason::kMaxNewTokens;
};

struct GenerationStats {
  int64_t requests = 0;
  int64_t prefill_forwards = 0;  // forwards that prefilled prompts' tails, alone or in a step of the running rows
                                 // (their shared prefixes: prefix_prefills)
  int64_t decode_forwards = 0;   // the other steps of the running batch (a row's last token, and its draft where it
                                 // has one)
  int64_t prefill_tokens = 0;    // prompt tokens computed after their shared prefixes
  int64_t prefix_tokens = 0;     // prompt tokens prefilled once into shared prefixes (cache misses only)
  int64_t generated_tokens = 0;
  int64_t max_rows = 0;          // the most rows a decode step ran
  int64_t cascade_forwards = 0;  // prefill and decode forwards that attended to the shared prefixes by cascade
  int64_t bytes_to_device = 0;   // what the call copied from the host to the devices
  int64_t bytes_to_host = 0;     // and back: a decode step's chosen tokens and their log-probabilities
  int64_t draft_tokens = 0;      // draft tokens fed after greedy rows' last tokens (prompt lookup) ...
  int64_t accepted_draft_tokens = 0;  // ... and those the model's own choices agreed with
  int64_t joined_in_steps = 0;   // prompts prefilled in a step of the running rows (no forward of their own)
  int64_t kv_bytes_copied = 0;   // cached keys and values copied after they were written (room grown, rows moved)
};

// Every counter of GenerationStats with its name, for totals and bindings; `peak` ones combine by the largest,
// the others by their sum.
struct GenerationStatsField {
  const char* name;
  int64_t GenerationStats::*member;
  bool peak;
};
const std::vector<GenerationStatsField>& generation_stats_fields();

struct GenerationResult {
  std::vector<Generation> generations;  // in the caller's order
  GenerationStats stats;
};

// Called after each token a row generates, with the request's index and every token it has generated so far;
// returns true to end the row there (a stop string, say). Runs inside the call and must not call the scorer.
using StopHook = std::function<bool(size_t request, const TokenIds& generated)>;

// "stop_id", "max_new_tokens" or "stop_hook".
std::string to_string(FinishReason reason);

}  // namespace prefix_scorer
