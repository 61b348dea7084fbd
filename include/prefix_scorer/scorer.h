#pragma once
// PrefixScorer: the plain path's numbers, with every shared prefix computed once.

#include "prefix_scorer/generation.h"
#include "prefix_scorer/model.h"
#include "prefix_scorer/types.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace prefix_scorer {

class PrefixCache;  // the LRU cache of prefix entries (internal)

class PrefixScorer {
 public:
  // Throws std::invalid_argument for a negative or absurd option.
  explicit PrefixScorer(std::shared_ptr<const Model> model, PrefixScorerOptions options = {});
  ~PrefixScorer();

  // Scores each request as one full forward over context + continuation[:-1] would, in the caller's order.
  // Requests are grouped by shared token prefix: each shared prefix is prefilled once into the cache, and only
  // the divergent suffixes run, in batches sorted by length. Throws std::invalid_argument naming the first bad
  // request before any compute. Concurrent calls are serialised.
  ScoringResult loglikelihood(const std::vector<Request>& requests);

  // lm-evaluation-harness's loglikelihood_rolling: each document scored in disjoint windows of max_length
  // tokens (the first predicted from `prefix_token`), summed; one score per document (0 for an empty one, as
  // lm-eval gives).
  ScoringResult loglikelihood_rolling(const std::vector<TokenIds>& documents, int64_t prefix_token);

  // Continues each prompt until a stop id, the stop hook or max_new_tokens ends it (see generation.h). Prompts'
  // shared prefixes are planned and cached as loglikelihood's are (and share its cache); rows join the running
  // batch after their prefixes and leave it as they stop. Throws std::invalid_argument naming the first bad
  // request before any compute; cancel() stops it between two forwards. on_progress reports tokens generated
  // against the tokens the call will generate (max_new_tokens, less what rows that stopped early left).
  GenerationResult generate(const std::vector<GenerationRequest>& requests, const StopHook& stop_hook = {});

  // Totals over every call so far, with the cache's current size.
  ScoringStats stats() const;
  void clear_cache();

  // Stops the call in flight (from another thread, or from on_progress) before its next forward: it throws
  // Cancelled, leaving the scorer as after a finished call (no pins; without keep_cache, nothing cached). Does
  // nothing when no call runs.
  void cancel();

  const Model& model() const { return *model_; }
  const PrefixScorerOptions& options() const { return options_; }

 private:
  ScoringResult score_locked(const std::vector<Request>& requests);

  std::shared_ptr<const Model> model_;
  PrefixScorerOptions options_;
  mutable std::mutex mutex_;
  std::atomic<bool> running_{false}, cancel_{false};
  std::unique_ptr<PrefixCache> cache_;
  ScoringStats totals_;
};

}  // namespace prefix_scorer
