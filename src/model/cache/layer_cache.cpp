#include "model/cache/layer_cache.h"

#include <algorithm>
#include <functional>

namespace prefix_scorer {
namespace {

using TensorMap = std::function<at::Tensor(const at::Tensor&)>;

std::vector<at::Tensor> map(const std::vector<at::Tensor>& tensors, const TensorMap& f) {
  std::vector<at::Tensor> out;
  out.reserve(tensors.size());
  for (const at::Tensor& t : tensors) out.push_back(f(t));
  return out;
}

// `slots` maps the slotted tensors, `states` the states.
LayerCache each(const LayerCache& cache, const TensorMap& slots, const TensorMap& states) {
  return {map(cache.slotted, slots), map(cache.state, states)};
}

LayerCache each(const LayerCache& cache, const TensorMap& f) { return each(cache, f, f); }

const at::Tensor& as_is(const at::Tensor& t) { return t; }

std::vector<at::Tensor> cat_each(const std::vector<LayerCache>& parts, std::vector<at::Tensor> LayerCache::*kind,
                                 int64_t dim) {
  std::vector<at::Tensor> out;
  const size_t kinds = parts.empty() ? 0 : (parts.front().*kind).size();
  for (size_t k = 0; k < kinds; ++k) {
    std::vector<at::Tensor> pieces;
    pieces.reserve(parts.size());
    for (const LayerCache& p : parts) pieces.push_back((p.*kind).at(k));
    out.push_back(at::cat(pieces, dim));
  }
  return out;
}

}  // namespace

int64_t LayerCache::bytes() const {
  int64_t total = 0;
  for (const auto* kind : {&slotted, &state}) {
    for (const at::Tensor& t : *kind) total += static_cast<int64_t>(t.nbytes());
  }
  return total;
}

LayerCache LayerCache::rows(const at::Tensor& index) const {
  return each(*this, [&](const at::Tensor& t) { return t.index_select(0, index); });
}

LayerCache LayerCache::row(int64_t row) const {
  return each(*this, [&](const at::Tensor& t) { return row == 0 && t.size(0) == 1 ? t : t.narrow(0, row, 1); });
}

LayerCache LayerCache::slot_range(int64_t begin, int64_t count) const {
  return each(*this, [&](const at::Tensor& t) { return begin == 0 && count == t.size(2) ? t : t.narrow(2, begin, count); },
              as_is);
}

LayerCache LayerCache::nothing_seen() const {
  return each(*this, [](const at::Tensor& t) { return t.narrow(2, 0, 0); }, [](const at::Tensor& t) { return at::zeros_like(t); });
}

LayerCache LayerCache::padded(int64_t before, int64_t after) const {
  if (before == 0 && after == 0) return *this;
  auto pad = [&](const at::Tensor& t) {
    auto zeros = [&t](int64_t slots) {
      std::vector<int64_t> sizes = t.sizes().vec();
      sizes[2] = slots;
      return at::zeros(sizes, t.options());
    };
    return at::cat({zeros(before), t, zeros(after)}, 2);
  };
  return each(*this, pad, as_is);
}

void LayerCache::write_slots(const at::Tensor& slot_index, const LayerCache& source) const {
  for (size_t k = 0; k < slotted.size(); ++k) slotted[k].index_copy_(2, slot_index, source.slotted.at(k));
}

void LayerCache::write_rows(const at::Tensor& index, const LayerCache& source) const {
  for (size_t k = 0; k < slotted.size(); ++k) slotted[k].index_copy_(0, index, source.slotted.at(k));
  for (size_t k = 0; k < state.size(); ++k) state[k].index_copy_(0, index, source.state.at(k));
}

void LayerCache::copy_from(const LayerCache& source) const {
  for (size_t k = 0; k < slotted.size(); ++k) slotted[k].copy_(source.slotted.at(k));
  for (size_t k = 0; k < state.size(); ++k) state[k].copy_(source.state.at(k));
}

LayerCache LayerCache::copy() const {
  return each(*this, [](const at::Tensor& t) { return t.clone(); });
}

LayerCache LayerCache::to(c10::Device device) const {
  return empty() || this->device() == device ? *this : each(*this, [&](const at::Tensor& t) { return t.to(device); });
}

LayerCache join_slots(const std::vector<LayerCache>& parts) {
  if (parts.size() == 1) return parts.front();
  return {cat_each(parts, &LayerCache::slotted, 2), parts.empty() ? std::vector<at::Tensor>{} : parts.back().state};
}

LayerCache join_rows(const std::vector<LayerCache>& parts) {
  if (parts.size() == 1) return parts.front();
  return {cat_each(parts, &LayerCache::slotted, 0), cat_each(parts, &LayerCache::state, 0)};
}

}  // namespace prefix_scorer
