#pragma once
// The rows being generated: their own keys and values in one cache that grows in place, and, where the call
// attends by cascade, the shared prefixes they continue (each held once for all its rows, never copied per row).
// A row that stops leaves its cache row vacant: nothing is copied, and the next rows to join are written there.
// Vacant rows step along (their outputs never read) until they outnumber half the rows going on; then the cache
// is compacted, the one copy of the others' keys and values, and that only when no joining rows filled them.

#include "prefix_scorer/model.h"
#include "model/forward_batch.h"
#include "scoring/prefix_cache.h"

#include <ATen/ATen.h>

#include <optional>
#include <vector>

namespace prefix_scorer {

struct RunningRow {
  size_t request = 0;
  int64_t position = 0;    // of its last token, the next one fed
  int64_t last_token = 0;
  at::Generator generator;  // its sampling stream (undefined until its first draw)
  EntryPtr prefix;         // by cascade: the prefix it continues (null: none); by gather it is in the row's cache
  int64_t rope_variant = 0;  // the rope variant its tokens rotate by (ForwardBatch::rope_variant)
};

// Prompts about to join: the rest of each after the prefix it continues (null: none), from `starts` on, each on
// its rope variant (ForwardBatch::rope_variant); their cache gets room for `most_new_tokens` more slots from the
// prefill on.
struct PromptTails {
  std::vector<EntryPtr> prefixes;
  std::vector<TokenIds> tails;
  std::vector<int64_t> starts, rope_variants;
  int64_t most_new_tokens = 0;
};

// Rows about to join: the log-probabilities after their prompts, and their own keys and values, row for row.
struct JoiningRows {
  at::Tensor logprobs;  // [rows, vocab] float32 on the device that computed them
  KvCache cache;
};

class RunningBatch {
 public:
  RunningBatch(const Model& model, bool cascade);

  bool cascade() const { return cascade_; }
  bool empty() const { return rows_.empty(); }
  size_t size() const { return rows_.size(); }
  std::vector<RunningRow>& rows() { return rows_; }
  const std::vector<RunningRow>& rows() const { return rows_; }

  // Runs the prompts' tails in one forward: by cascade over the distinct prefixes, or after each prefix gathered
  // into the row's own cache.
  JoiningRows prefill(const PromptTails& prompts) const;
  // Whether a step may run a prefill in its forward (step's `joining`): rows to step, and a model whose layers
  // are token-wise (Model::packs_real_tokens).
  bool prefills_in_step() const;
  // Adds rows: `cache`'s rows are their own keys and values, `rows` their states, in the same order.
  void add(const KvCache& cache, std::vector<RunningRow> rows);
  // Room for `more` slots past the cache's last, made at the next step: the most any row may still feed.
  void reserve(int64_t more) { cache_.reserve(cache_.slots() + more); }
  // Keeps the rows listed in `going_on`, in order.
  void keep(const std::vector<int64_t>& going_on);
  // One step of every row: its last token in, then its draft (none: one token), each row's drafts[i] in running
  // order (empty: none for any row); out, the [sum of (1 + draft length), vocab] float32 log-probabilities on the
  // device, row after row, of the position after each token fed. With `joining` (prefills_in_step), the prefill of
  // those prompts runs in the same forward, its matmuls shared with the step's, into `joined`.
  at::Tensor step(const std::vector<TokenIds>& drafts = {}, const PromptTails* joining = nullptr,
                  JoiningRows* joined = nullptr);
  // Keeps the first `kept` tokens row i fed in the last step (its last token and the draft tokens the model agreed
  // with); the slots of the others become invalid, never attended to again.
  void keep_fed(size_t i, int64_t kept);
  // The rows' keys and values (with the vacant rows), and the cache row each row is in.
  const KvCache& cache() const { return cache_; }
  const std::vector<int64_t>& cache_rows() const { return cache_row_; }

 private:
  // A prefill's forward: its batch, the positions it scores, its rows' own cache and the prefixes they share.
  struct PrefillForward {
    ForwardBatch batch;
    at::Tensor score_rows;
    KvCache cache;
    std::optional<SharedPrefixes> shared;
  };
  PrefillForward prefill_forward(const PromptTails& prompts) const;

  // The shared prefixes of the rows by cascade, rebuilt only when the set of distinct prefixes changes.
  void update_shared();

  // Copies the rows going on into a cache of their own, without the vacant rows.
  void compact();

  const Model& model_;
  const bool cascade_;
  KvCache cache_;
  std::vector<RunningRow> rows_;
  std::vector<int64_t> cache_row_;  // rows_[i]'s row in cache_
  std::vector<int64_t> vacant_;     // cache rows no row is in
  int64_t step_width_ = 1;          // the tokens every cache row fed in the last step
  std::vector<const PrefixEntry*> distinct_;  // the prefixes shared_ holds, in its order
  std::optional<SharedPrefixes> shared_;
};

}  // namespace prefix_scorer
