#include "scoring/cascade_or_gather.h"

#include "model/config/model_config.h"
#include "model/forward_batch.h"
#include "model/layers/mixer.h"
#include "scoring/prefix_kv.h"

#include <algorithm>
#include <utility>

namespace prefix_scorer {

// Measured on the CPU: cascade ties gather at 600-token prefixes, wins from 1,000 tokens on, and loses ~4% at 100.
bool use_cascade(const std::vector<const PrefixEntry*>& prefixes, int64_t cascade_min_prefix_len) {
  if (cascade_min_prefix_len < 0) return false;
  if (cascade_min_prefix_len == 0) return true;
  int64_t tokens = 0;
  std::vector<const PrefixEntry*> distinct;
  for (const PrefixEntry* p : prefixes) {
    tokens += p == nullptr ? 0 : p->depth();
    if (std::find(distinct.begin(), distinct.end(), p) == distinct.end()) distinct.push_back(p);
  }
  const auto rows = static_cast<int64_t>(prefixes.size());
  return rows > static_cast<int64_t>(distinct.size()) && tokens >= cascade_min_prefix_len * rows;
}

PrefixedForward forward_after(const Model& model, const PrefixScorerOptions& options,
                              const std::vector<const PrefixEntry*>& prefixes, const ForwardBatch& batch,
                              const at::Tensor& score_rows, ScoringStats& stats, PrefixStack* kept) {
  const bool any_prefix =
      std::any_of(prefixes.begin(), prefixes.end(), [](const PrefixEntry* p) { return p != nullptr; });
  if (any_prefix && use_cascade(prefixes, options.cascade_min_prefix_len)) {
    // A window's mask needs each row's prefix positions, soft-capping the scores: such a model gathers, and the
    // distinct prefixes are stacked only for a forward that attends to them by cascade.
    if (!cascade_exact(model.spec())) {
      ++stats.cascade_fallbacks;
    } else if (auto shared = distinct_prefix_kv(model, prefixes, kept)) {
      KvCache own(model.config().num_layers);
      at::Tensor logprobs = model.forward(batch, &own, score_rows, &*shared);
      ++stats.cascade_forwards;
      return {std::move(logprobs), std::move(own), 0};
    }
  }
  KvCache view = gather_prefix_kv(model, prefixes, kept);
  const int64_t own_slots = view.slots();
  at::Tensor logprobs = model.forward(batch, &view, score_rows);
  return {std::move(logprobs), std::move(view), own_slots};
}

}  // namespace prefix_scorer
