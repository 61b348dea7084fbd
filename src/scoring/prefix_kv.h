#pragma once
// Moving KV between cached prefix entries and the per-batch caches a forward runs on.

#include "prefix_scorer/model.h"
#include "scoring/prefix_cache.h"

#include <optional>
#include <vector>

namespace prefix_scorer {

// The distinct prefixes of a batch's rows (null, for no prefix, among them), each layer's cache of them stacked
// [prefixes, heads, longest, width] and right-padded with zeros: made once for the forwards over the same prefixes
// when the caller keeps it (it must then keep those entries alive, so that no other entry takes their address).
struct PrefixStack {
  std::vector<const PrefixEntry*> prefixes;  // in stack order
  std::vector<LayerCache> layers;
  int64_t longest = 0;
};

// A batch cache whose row i holds the keys and values of the whole prefix of entries[i] (its chain of segments;
// null for no prefix), right-padded with invalid slots to the longest. Per layer, the rows pick their prefix with
// an index tensor on that layer's device, out of `kept` when it stacks the same prefixes (else stacked there anew).
KvCache gather_prefix_kv(const Model& model, const std::vector<const PrefixEntry*>& entries, PrefixStack* kept = nullptr);

// The distinct prefixes of the rows' entries once each, for cascade attention (out of `kept` as above); nullopt
// when no row has one.
std::optional<SharedPrefixes> distinct_prefix_kv(const Model& model, const std::vector<const PrefixEntry*>& entries,
                                                 PrefixStack* kept = nullptr);

// Copies row `row`'s slots [begin, begin + len) out of a batch cache, one [1, heads, len, width] per layer.
std::vector<LayerCache> take_segment(const KvCache& cache, int64_t row, int64_t begin, int64_t len);

// Bytes that `tokens` tokens take in every layer's cache of `model`; with `expanded`, what they would take with
// latent attention's keys and values expanded (MixerCosts::expanded_per_token).
int64_t kv_bytes(const Model& model, int64_t tokens, bool expanded = false);
// Bytes that a row (or a prefix entry) keeps in every recurrent layer's cache, whatever its length.
int64_t state_bytes(const Model& model);

}  // namespace prefix_scorer
