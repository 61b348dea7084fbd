#pragma once
// Plain structs passed between the units: requests in, scores and statistics out.

#include <cstdint>
#include <functional>
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
  // Called after each forward with the rows done and the rows in all; may be empty. It runs inside the call and
  // must not call back into the scorer.
  std::function<void(int64_t done, int64_t total)> on_progress;
};

// cascade_min_prefix_len's default: 256 where the first layer is on the CPU; -1 (gather) on CUDA, where cascade has
// not yet been measured faster than gather. PrefixScorer resolves it when it is built.
constexpr int64_t kCascadeByDevice = -2;

// Options of the prefix-caching scorer, on top of the batching ones.
struct PrefixScorerOptions : ScoringOptions {
  int64_t min_prefix_len = 32;  // shorter shared prefixes are not cached
  int64_t prefill_batch = 32;   // distinct prefixes prefilled together in one forward
  int64_t max_cache_bytes = int64_t{2} << 30;
  int64_t max_cache_entries = 4096;
  bool keep_cache = false;  // entries survive to the next call, under the same LRU budgets
  // Attention over a batch's cached prefixes: by cascade (each distinct prefix once for all its rows' queries,
  // merged by log-sum-exp, no copy of the prefix per row) when the rows' prefixes average at least this many
  // tokens and the rows outnumber their distinct prefixes; else by gather (each row attends to its own copy).
  // 0: cascade whenever a batch has prefixes; -1: always gather. Sliding-window models always gather.
  // kCascadeByDevice (the default): see there.
  int64_t cascade_min_prefix_len = kCascadeByDevice;
  // Memory one forward may take: its rows' gathered prefix keys and values, its own, and its attention masks.
  // Batches are cut to fit (a single row always runs). 0: a quarter of the free memory on CUDA; on the CPU a quarter
  // of the memory available (at least 1 GiB).
  int64_t max_batch_bytes = 0;
  // A shared prefix that only its own rows continue (no longer shared prefix below it), with at most this many
  // rows, runs as one packed tree instead of a cache entry: the prefix once, then each row's continuation,
  // under a tree mask. 0: never (always so for a model with recurrent layers, whose state runs along a row).
  int64_t tree_max_branches = 8;
  // Rows (and packed trees) shorter than their forward's longest share a row of it, one after another, each seeing
  // only its own tokens and its cached prefix, instead of being padded. false: one per row (always so for a model
  // with recurrent layers).
  bool pack_rows = true;
  // Generation: a greedy row feeds up to this many draft tokens after its last one in a decode step (where its last
  // tokens occurred before in its prompt or output, the tokens that followed them) and keeps those the model's own
  // choices agree with: the same tokens in fewer steps. 0: one token a step. Never for sampled rows, for models
  // with recurrent layers or for LongRoPE, and shortened where a step would feed more than 32 tokens in all.
  int64_t max_draft_tokens = 3;
};

// Every option of PrefixScorerOptions (the progress hook aside) with its name and a one-line meaning: the one list
// the Python bindings, the benchmark's flags (dashes for underscores) and the documentation's table follow.
struct OptionField {
  const char* name;
  int64_t PrefixScorerOptions::*number;  // exactly one of number and flag is set
  bool PrefixScorerOptions::*flag;
  const char* help;
};
const std::vector<OptionField>& option_fields();

struct ScoringStats {
  int64_t requests = 0;
  int64_t forwards = 0;         // model forward calls
  int64_t tokens_computed = 0;  // real tokens fed to the model: prefill_tokens + suffix_tokens
  int64_t padding_tokens = 0;   // padding fed alongside them
  int64_t scored_rows = 0;      // positions projected through lm_head
  int64_t truncated = 0;        // requests left-truncated to max_length + 1
  // Prefix cache (zero on the plain path).
  int64_t prefixes_prefilled = 0;  // prefix segments computed (each after a miss)
  int64_t cache_hits = 0;          // prefixes a call needed and found cached, without computing them
  int64_t cache_misses = 0;        // prefixes a call needed and had to compute (again, if evicted before)
  int64_t evictions = 0;           // entries the LRU budget pushed out
  int64_t fallbacks = 0;           // rows run without (part of) their prefix because the cache could not hold it
  int64_t cascade_forwards = 0;    // forwards that attended to their cached prefixes by cascade attention
  int64_t trees_packed = 0;        // shared prefixes run as packed trees (not cached)
  int64_t rows_shared = 0;         // rows and trees run after another in one forward row instead of padded alone
  int64_t cascade_fallbacks = 0;   // forwards that gathered although cascade was chosen (sliding window)
  int64_t prefill_tokens = 0;
  int64_t suffix_tokens = 0;
  int64_t prefill_padding = 0;     // the part of padding_tokens fed in prefill waves ...
  int64_t suffix_padding = 0;      // ... and in suffix batches
  int64_t host_copies = 0;         // host-to-device copies (counted on the CPU too): a few per forward and device
  int64_t host_syncs = 0;          // device-to-host copies, each a wait for the device: one per scored batch
  int64_t bytes_to_device = 0;     // what the host-to-device copies moved
  int64_t bytes_to_host = 0;       // what the device-to-host copies moved
  int64_t entries_held = 0;        // after the call
  int64_t bytes_held = 0;          // after the call
  int64_t entries_pinned = 0;      // after the call: 0, unless a call failed to unpin what it used
  int64_t peak_bytes = 0;          // largest cache size during the call
};

// Every counter of ScoringStats with its name, for totals, reports and bindings.
struct StatsField {
  const char* name;
  int64_t ScoringStats::*member;
};
const std::vector<StatsField>& stats_fields();

struct ScoringResult {
  std::vector<Score> scores;  // in the caller's order
  ScoringStats stats;
};

}  // namespace prefix_scorer
