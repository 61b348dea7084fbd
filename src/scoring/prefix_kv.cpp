#include "scoring/prefix_kv.h"

#include "model/host_transfers.h"
#include "model/layer_spec.h"

#include <algorithm>
#include <optional>

namespace prefix_scorer {
namespace {

// An entry's whole prefix in one layer: its ancestors' segments, then its own.
LayerCache whole_prefix(const PrefixEntry* entry, int64_t layer) {
  std::vector<LayerCache> parts;
  for (const PrefixEntry* e = entry; e != nullptr; e = e->parent.get()) parts.push_back(e->layers[layer]);
  std::reverse(parts.begin(), parts.end());
  return join_slots(parts);
}

// The distinct prefixes of a batch's rows (null, for no prefix, among them) and which one each row takes.
struct DistinctPrefixes {
  std::vector<const PrefixEntry*> prefixes;
  std::vector<int64_t> pick;
  int64_t longest = 0;
};

DistinctPrefixes distinct_prefixes(const std::vector<const PrefixEntry*>& entries) {
  DistinctPrefixes d;
  for (const PrefixEntry* e : entries) {
    auto it = std::find(d.prefixes.begin(), d.prefixes.end(), e);
    d.pick.push_back(it - d.prefixes.begin());
    if (it == d.prefixes.end()) d.prefixes.push_back(e);
    d.longest = std::max(d.longest, e == nullptr ? 0 : e->depth());
  }
  return d;
}

bool keeps_cache(const Model& model, int64_t layer) {
  return model.spec().cached_per_token(layer) > 0 || model.spec().state_bytes(layer, 1) > 0;
}

// One layer's cache of every distinct prefix, right-padded with zeros to the longest: [prefixes, heads, longest,
// width] tensors on the layer's device; nothing for a layer that keeps none.
LayerCache stacked_layer(const Model& model, const DistinctPrefixes& d, int64_t layer) {
  if (!keeps_cache(model, layer)) return {};
  std::vector<LayerCache> wholes(d.prefixes.size());
  const LayerCache* some = nullptr;  // any prefix's, the shape of the empty one's padding
  for (size_t p = 0; p < d.prefixes.size(); ++p) {
    if (d.prefixes[p] == nullptr) continue;
    wholes[p] = whole_prefix(d.prefixes[p], layer);
    some = &wholes[p];
  }
  std::vector<LayerCache> rows;
  for (size_t p = 0; p < d.prefixes.size(); ++p) {
    const LayerCache& whole = d.prefixes[p] == nullptr ? some->nothing_seen() : wholes[p];
    rows.push_back(whole.padded(0, d.longest - whole.slots()));
  }
  return join_rows(rows);
}

}  // namespace

KvCache gather_prefix_kv(const Model& model, const std::vector<const PrefixEntry*>& entries) {
  KvCache cache(model.config().num_layers);
  const DistinctPrefixes d = distinct_prefixes(entries);
  if (d.longest == 0) return cache;
  const at::Tensor pick = at::tensor(d.pick, at::kLong);
  at::Tensor on_device;
  for (int64_t l = 0; l < cache.num_layers(); ++l) {
    if (!keeps_cache(model, l)) continue;
    cache.append_layer(l, stacked_layer(model, d, l).rows(upload_once(pick, model.layer_device(l), on_device)));
  }
  const auto b = static_cast<int64_t>(entries.size());
  const at::Tensor positions = at::arange(d.longest, at::kLong).expand({b, d.longest}).contiguous();
  at::Tensor depths = at::empty({b, 1}, at::kLong);
  for (int64_t i = 0; i < b; ++i) depths[i][0] = entries[i] == nullptr ? 0 : entries[i]->depth();
  cache.append_slots(positions, positions < depths);
  return cache;
}

std::optional<SharedPrefixes> distinct_prefix_kv(const Model& model, const std::vector<const PrefixEntry*>& entries) {
  const DistinctPrefixes d = distinct_prefixes(entries);
  if (d.longest == 0) return std::nullopt;
  SharedPrefixes shared;
  for (int64_t l = 0; l < model.config().num_layers; ++l) shared.layers.push_back(stacked_layer(model, d, l));
  std::vector<int64_t> lengths;
  for (const PrefixEntry* e : d.prefixes) lengths.push_back(e == nullptr ? 0 : e->depth());
  shared.lengths = at::tensor(lengths, at::kLong);
  shared.row_prefix = at::tensor(d.pick, at::kLong);
  return shared;
}

std::vector<LayerCache> take_segment(const KvCache& cache, int64_t row, int64_t begin, int64_t len) {
  std::vector<LayerCache> segment;
  for (int64_t l = 0; l < cache.num_layers(); ++l)
    segment.push_back(cache.layer(l).row(row).slot_range(begin, len).copy());
  return segment;
}

int64_t kv_bytes(const Model& model, int64_t tokens, bool expanded) {
  int64_t widths = 0;  // of every layer's cache, per token
  for (int64_t l = 0; l < model.config().num_layers; ++l)
    widths += expanded ? model.spec().expanded_per_token(l) : model.spec().cached_per_token(l);
  return widths * tokens * static_cast<int64_t>(c10::elementSize(model.dtype()));
}

int64_t state_bytes(const Model& model) {
  int64_t total = 0;
  const auto dtype_bytes = static_cast<int64_t>(c10::elementSize(model.dtype()));
  for (int64_t l = 0; l < model.config().num_layers; ++l) total += model.spec().state_bytes(l, dtype_bytes);
  return total;
}

}  // namespace prefix_scorer
