#include "model/kv_cache.h"

#include "model/host_transfers.h"

#include <stdexcept>

namespace prefix_scorer {
namespace {

at::Tensor concat_slots(const at::Tensor& old, const at::Tensor& fresh, int64_t dim) {
  return old.defined() ? at::cat({old, fresh}, dim) : fresh;
}

// `t` with `count` slots in front along `dim`, filled with `fill`.
at::Tensor pad_front(const at::Tensor& t, int64_t dim, int64_t count, const at::Scalar& fill) {
  if (count == 0) return t;
  std::vector<int64_t> sizes = t.sizes().vec();
  sizes[dim] = count;
  return at::cat({at::full(sizes, fill, t.options()), t}, dim);
}

// Room for `slots` slots of `like`'s rows, holding `old` (undefined: nothing yet) in its first slots.
at::Tensor room_holding(const at::Tensor& old, const at::Tensor& like, int64_t slots) {
  std::vector<int64_t> sizes = like.sizes().vec();
  sizes[2] = slots;
  at::Tensor room = at::empty(sizes, like.options());
  if (old.defined() && old.size(2) > 0) room.narrow(2, 0, old.size(2)).copy_(old);
  return room;
}

}  // namespace

void KvCache::append_layer(int64_t i, const at::Tensor& keys, const at::Tensor& values) {
  LayerKv& layer = layers_.at(i);
  if (!grow_in_place_) {
    layer.keys = concat_slots(layer.keys, keys, 2);
    layer.values = concat_slots(layer.values, values, 2);
    return;
  }
  room_.resize(layers_.size());
  LayerKv& room = room_[i];
  const int64_t used = layer.keys.defined() ? layer.keys.size(2) : 0, added = keys.size(2);
  if (!room.keys.defined() || room.keys.size(2) < used + added) {
    const int64_t slots = 2 * (used + added);
    room = {room_holding(layer.keys, keys, slots), room_holding(layer.values, values, slots)};
  }
  room.keys.narrow(2, used, added).copy_(keys);
  room.values.narrow(2, used, added).copy_(values);
  layer = {room.keys.narrow(2, 0, used + added), room.values.narrow(2, 0, used + added)};
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

void KvCache::keep_rows(const std::vector<int64_t>& rows) {
  KvCache kept = copy_rows(rows);
  layers_ = std::move(kept.layers_);
  positions_ = std::move(kept.positions_);
  valid_ = std::move(kept.valid_);
  room_.clear();
}

KvCache KvCache::copy_rows(const std::vector<int64_t>& rows) const {
  KvCache copy(num_layers());
  if (!positions_.defined()) return copy;
  const at::Tensor index = at::tensor(rows, at::kLong);
  at::Tensor on_device;
  for (int64_t i = 0; i < num_layers(); ++i) {
    const LayerKv& layer = layers_[i];
    if (!layer.keys.defined()) continue;
    const at::Tensor& picked = upload_once(index, layer.keys.device(), on_device);
    copy.layers_[i] = {layer.keys.index_select(0, picked), layer.values.index_select(0, picked)};
  }
  copy.positions_ = positions_.index_select(0, index);
  copy.valid_ = valid_.index_select(0, index);
  copy.drop_unused_leading_slots();
  return copy;
}

void KvCache::add_rows(const KvCache& other) {
  if (other.num_layers() != num_layers())
    throw std::invalid_argument("add_rows: the caches have different numbers of layers");
  if (!other.positions_.defined()) return;
  if (!positions_.defined()) {
    layers_ = other.layers_;
    positions_ = other.positions_;
    valid_ = other.valid_;
    room_.clear();
    return;
  }
  const int64_t slots = std::max(this->slots(), other.slots());
  const int64_t mine = slots - this->slots(), theirs = slots - other.slots();
  for (int64_t i = 0; i < num_layers(); ++i) {
    LayerKv& layer = layers_[i];
    const LayerKv& added = other.layers_[i];
    if (!added.keys.defined()) continue;
    layer = {at::cat({pad_front(layer.keys, 2, mine, 0), pad_front(added.keys, 2, theirs, 0)}),
             at::cat({pad_front(layer.values, 2, mine, 0), pad_front(added.values, 2, theirs, 0)})};
  }
  positions_ = at::cat({pad_front(positions_, 1, mine, 0), pad_front(other.positions_, 1, theirs, 0)});
  valid_ = at::cat({pad_front(valid_, 1, mine, false), pad_front(other.valid_, 1, theirs, false)});
  room_.clear();
}

void KvCache::drop_unused_leading_slots() {
  const at::Tensor used = valid_.any(0);
  int64_t first = 0;
  const auto flags = used.accessor<bool, 1>();
  while (first < used.size(0) && !flags[first]) ++first;
  if (first == 0) return;
  const int64_t left = slots() - first;
  for (LayerKv& layer : layers_) {
    if (layer.keys.defined()) layer = {layer.keys.narrow(2, first, left), layer.values.narrow(2, first, left)};
  }
  positions_ = positions_.narrow(1, first, left);
  valid_ = valid_.narrow(1, first, left);
}

}  // namespace prefix_scorer
