#include "scoring/prefix_kv.h"

#include "model/host_transfers.h"
#include "model/layer_spec.h"

#include <algorithm>
#include <optional>

namespace prefix_scorer {
namespace {

// Keys or values of an entry's whole prefix in one layer: its ancestors' segments, then its own.
at::Tensor whole_prefix(const PrefixEntry* entry, int64_t layer, bool keys) {
  std::vector<at::Tensor> parts;
  for (const PrefixEntry* e = entry; e != nullptr; e = e->parent.get())
    parts.push_back(keys ? e->layers[layer].keys : e->layers[layer].values);
  std::reverse(parts.begin(), parts.end());
  return parts.size() == 1 ? parts[0] : at::cat(parts, 2);
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

// Whether a layer keeps keys and values of its own (else it reads another layer's and holds none).
bool holds_kv(const Model& model, int64_t layer) { return model.spec().layers.at(layer).attention.kv_layer == layer; }

// One layer's keys and values of every distinct prefix, right-padded to the longest:
// [prefixes, kv_heads, longest, head_dim] on the layer's device; nothing for a layer that holds none.
LayerKv stacked_layer(const Model& model, const DistinctPrefixes& d, int64_t layer) {
  if (!holds_kv(model, layer)) return {};
  const AttentionSpec& a = model.spec().layers.at(layer).attention;
  const auto options = at::TensorOptions().device(model.layer_device(layer)).dtype(model.dtype());
  std::vector<at::Tensor> keys, values;
  for (const PrefixEntry* e : d.prefixes) {
    const int64_t depth = e == nullptr ? 0 : e->depth();
    const at::Tensor pad = at::zeros({1, a.kv_heads, d.longest - depth, a.head_dim}, options);
    keys.push_back(depth == 0 ? pad : at::cat({whole_prefix(e, layer, true), pad}, 2));
    values.push_back(depth == 0 ? pad : at::cat({whole_prefix(e, layer, false), pad}, 2));
  }
  return {at::cat(keys), at::cat(values)};
}

}  // namespace

KvCache gather_prefix_kv(const Model& model, const std::vector<const PrefixEntry*>& entries) {
  KvCache cache(model.config().num_layers);
  const DistinctPrefixes d = distinct_prefixes(entries);
  if (d.longest == 0) return cache;
  const at::Tensor pick = at::tensor(d.pick, at::kLong);
  at::Tensor on_device;
  for (int64_t l = 0; l < cache.num_layers(); ++l) {
    if (!holds_kv(model, l)) continue;
    const LayerKv stacked = stacked_layer(model, d, l);
    const at::Tensor& rows = upload_once(pick, model.layer_device(l), on_device);
    cache.append_layer(l, stacked.keys.index_select(0, rows), stacked.values.index_select(0, rows));
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

std::vector<LayerKv> take_segment(const KvCache& cache, int64_t row, int64_t begin, int64_t len) {
  std::vector<LayerKv> segment;
  for (int64_t l = 0; l < cache.num_layers(); ++l) {
    const LayerKv& kv = cache.layer(l);
    if (!kv.keys.defined()) {
      segment.emplace_back();
      continue;
    }
    segment.push_back({kv.keys.narrow(0, row, 1).narrow(2, begin, len).clone(),
                       kv.values.narrow(0, row, 1).narrow(2, begin, len).clone()});
  }
  return segment;
}

int64_t kv_bytes(const Model& model, int64_t tokens) {
  int64_t widths = 0;  // keys and values of every layer, per token
  const std::vector<LayerSpec>& layers = model.spec().layers;
  for (size_t l = 0; l < layers.size(); ++l)
    widths += holds_kv(model, static_cast<int64_t>(l)) ? 2 * layers[l].attention.kv_width() : 0;
  return widths * tokens * static_cast<int64_t>(c10::elementSize(model.dtype()));
}

}  // namespace prefix_scorer
