#include "prefix_scorer/kv_cache.h"

namespace prefix_scorer {
namespace {

at::Tensor concat_slots(const at::Tensor& old, const at::Tensor& fresh, int64_t dim) {
  return old.defined() ? at::cat({old, fresh}, dim) : fresh;
}

}  // namespace

void KvCache::append_layer(int64_t i, const at::Tensor& keys, const at::Tensor& values) {
  LayerKv& layer = layers_.at(i);
  layer.keys = concat_slots(layer.keys, keys, 2);
  layer.values = concat_slots(layer.values, values, 2);
}

void KvCache::append_slots(const at::Tensor& positions, const at::Tensor& valid) {
  positions_ = concat_slots(positions_, positions, 1);
  valid_ = concat_slots(valid_, valid, 1);
}

int64_t KvCache::bytes() const {
  int64_t total = 0;
  for (const auto& layer : layers_) {
    if (layer.keys.defined()) total += layer.keys.nbytes() + layer.values.nbytes();
  }
  return total;
}

}  // namespace prefix_scorer
