#pragma once
// One forward of a batch whose rows continue cached prefixes: by cascade attention over the distinct prefixes,
// or over a copy of each row's prefix gathered in front of it.

#include "model/forward_batch.h"
#include "scoring/prefix_cache.h"
#include "scoring/prefix_kv.h"
#include "prefix_scorer/model.h"
#include "prefix_scorer/types.h"

#include <vector>

namespace prefix_scorer {

struct PrefixedForward {
  at::Tensor logprobs;  // of the score rows asked for
  KvCache cache;        // holds the batch's own keys and values from slot own_slots on
  int64_t own_slots = 0;
};

// Whether a forward whose rows continue `prefixes` (null: none) attends by cascade (see cascade_min_prefix_len).
bool use_cascade(const std::vector<const PrefixEntry*>& prefixes, int64_t cascade_min_prefix_len);

// Runs `batch` after each row's prefix, counting cascade forwards and cascade fallbacks in `stats`; the prefixes
// are stacked once into `kept`, where given, for the forwards over the same ones (see PrefixStack).
PrefixedForward forward_after(const Model& model, const PrefixScorerOptions& options,
                              const std::vector<const PrefixEntry*>& prefixes, const ForwardBatch& batch,
                              const at::Tensor& score_rows, ScoringStats& stats, PrefixStack* kept = nullptr);

}  // namespace prefix_scorer
