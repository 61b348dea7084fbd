#include "prefix_scorer/prefix_view.h"

#include <algorithm>

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

}  // namespace

KvCache prefix_view(const Model& model, const std::vector<const PrefixEntry*>& entries) {
  const ModelConfig& c = model.config();
  KvCache cache(c.num_layers);
  int64_t longest = 0;
  for (const PrefixEntry* e : entries) longest = std::max(longest, e == nullptr ? 0 : e->depth());
  if (longest == 0) return cache;

  // Distinct prefixes of the batch, and which one each row takes.
  std::vector<const PrefixEntry*> distinct;
  std::vector<int64_t> pick;
  for (const PrefixEntry* e : entries) {
    auto it = std::find(distinct.begin(), distinct.end(), e);
    pick.push_back(it - distinct.begin());
    if (it == distinct.end()) distinct.push_back(e);
  }
  const at::Tensor pick_cpu = at::tensor(pick, at::kLong);
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const c10::Device device = model.layer_device(l);
    const auto options = at::TensorOptions().device(device).dtype(model.dtype());
    std::vector<at::Tensor> keys, values;
    for (const PrefixEntry* e : distinct) {
      const int64_t depth = e == nullptr ? 0 : e->depth();
      const at::Tensor pad = at::zeros({1, c.num_kv_heads, longest - depth, c.head_dim}, options);
      keys.push_back(depth == 0 ? pad : at::cat({whole_prefix(e, l, true), pad}, 2));
      values.push_back(depth == 0 ? pad : at::cat({whole_prefix(e, l, false), pad}, 2));
    }
    const at::Tensor rows = pick_cpu.to(device);
    cache.append_layer(l, at::cat(keys).index_select(0, rows), at::cat(values).index_select(0, rows));
  }
  const auto b = static_cast<int64_t>(entries.size());
  const at::Tensor positions = at::arange(longest, at::kLong).expand({b, longest}).contiguous();
  at::Tensor depths = at::empty({b, 1}, at::kLong);
  for (int64_t i = 0; i < b; ++i) depths[i][0] = entries[i] == nullptr ? 0 : entries[i]->depth();
  cache.append_slots(positions, positions < depths);
  return cache;
}

std::vector<LayerKv> take_segment(const KvCache& cache, int64_t row, int64_t begin, int64_t len) {
  std::vector<LayerKv> segment;
  for (int64_t l = 0; l < cache.num_layers(); ++l) {
    const LayerKv& kv = cache.layer(l);
    segment.push_back({kv.keys.narrow(0, row, 1).narrow(2, begin, len).clone(),
                       kv.values.narrow(0, row, 1).narrow(2, begin, len).clone()});
  }
  return segment;
}

int64_t kv_bytes(const Model& model, int64_t tokens) {
  const ModelConfig& c = model.config();
  return 2 * c.num_layers * c.num_kv_heads * c.head_dim * tokens * static_cast<int64_t>(c10::elementSize(model.dtype()));
}

}  // namespace prefix_scorer
