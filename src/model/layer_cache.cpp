#include "model/layer_cache.h"

#include <algorithm>
#include <functional>

namespace prefix_scorer {
namespace {

LayerCache each(const LayerCache& cache, const std::function<at::Tensor(const at::Tensor&)>& f) {
  LayerCache out;
  out.slotted.reserve(cache.slotted.size());
  for (const at::Tensor& t : cache.slotted) out.slotted.push_back(f(t));
  return out;
}

LayerCache join(const std::vector<LayerCache>& parts, int64_t dim) {
  if (parts.size() == 1) return parts.front();
  LayerCache out;
  const size_t kinds = parts.empty() ? 0 : parts.front().slotted.size();
  for (size_t k = 0; k < kinds; ++k) {
    std::vector<at::Tensor> pieces;
    pieces.reserve(parts.size());
    for (const LayerCache& p : parts) pieces.push_back(p.slotted.at(k));
    out.slotted.push_back(at::cat(pieces, dim));
  }
  return out;
}

}  // namespace

int64_t LayerCache::bytes() const {
  int64_t total = 0;
  for (const at::Tensor& t : slotted) total += static_cast<int64_t>(t.nbytes());
  return total;
}

LayerCache LayerCache::rows(const at::Tensor& index) const {
  return each(*this, [&](const at::Tensor& t) { return t.index_select(0, index); });
}

LayerCache LayerCache::row(int64_t row) const {
  return each(*this, [&](const at::Tensor& t) { return t.narrow(0, row, 1); });
}

LayerCache LayerCache::slot_range(int64_t begin, int64_t count) const {
  return each(*this, [&](const at::Tensor& t) { return t.narrow(2, begin, count); });
}

LayerCache LayerCache::padded(int64_t before, int64_t after) const {
  if (before == 0 && after == 0) return *this;
  return each(*this, [&](const at::Tensor& t) {
    auto zeros = [&t](int64_t slots) {
      std::vector<int64_t> sizes = t.sizes().vec();
      sizes[2] = slots;
      return at::zeros(sizes, t.options());
    };
    return at::cat({zeros(before), t, zeros(after)}, 2);
  });
}

void LayerCache::write_slots(const at::Tensor& slot_index, const LayerCache& source) const {
  for (size_t k = 0; k < slotted.size(); ++k) slotted[k].index_copy_(2, slot_index, source.slotted.at(k));
}

void LayerCache::copy_from(const LayerCache& source) const {
  for (size_t k = 0; k < slotted.size(); ++k) slotted[k].copy_(source.slotted.at(k));
}

LayerCache LayerCache::copy() const {
  return each(*this, [](const at::Tensor& t) { return t.clone(); });
}

LayerCache LayerCache::to(c10::Device device) const {
  const bool there = std::all_of(slotted.begin(), slotted.end(), [&](const at::Tensor& t) { return t.device() == device; });
  return there ? *this : each(*this, [&](const at::Tensor& t) { return t.to(device); });
}

LayerCache join_slots(const std::vector<LayerCache>& parts) { return join(parts, 2); }

LayerCache join_rows(const std::vector<LayerCache>& parts) { return join(parts, 0); }

}  // namespace prefix_scorer
