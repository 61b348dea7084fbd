#include "model/cache/kv_cache.h"

#include "model/host_transfers.h"

#include <c10/core/InferenceMode.h>
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace prefix_scorer {
namespace {

at::Tensor concat_slots(const at::Tensor& old, const at::Tensor& fresh) {
  return old.defined() ? at::cat({old, fresh}, 1) : fresh;
}

// `t` ([rows, slots]) with `count` slots in front, filled with `fill`.
at::Tensor pad_front(const at::Tensor& t, int64_t count, const at::Scalar& fill) {
  if (count == 0) return t;
  return at::cat({at::full({t.size(0), count}, fill, t.options()), t}, 1);
}

}  // namespace

int64_t& kv_bytes_copied() {
  thread_local int64_t bytes = 0;
  return bytes;
}

void KvCache::append_layer(int64_t i, const LayerCache& fresh) {
  LayerCache& layer = layers_.at(i);
  if (!grow_in_place_ || fresh.slotted.empty()) {
    if (!fresh.slotted.empty()) kv_bytes_copied() += LayerCache{layer.slotted, {}}.bytes();  // a state is replaced
    layer = layer.empty() ? fresh : join_slots({layer, fresh});
    return;
  }
  room_.resize(layers_.size());
  LayerCache& room = room_[i];  // slotted tensors only: a state is replaced, never written into room
  const int64_t used = layer.slots(), added = fresh.slots();
  if (room.slots() < std::max(used + added, reserved_)) {
    const int64_t size = used + added <= reserved_ ? reserved_ : 2 * (used + added);
    LayerCache grown{fresh.slot_range(0, 0).padded(0, size).slotted, {}};
    if (used > 0) {
      grown.slot_range(0, used).copy_from({layer.slotted, {}});
      kv_bytes_copied() += LayerCache{layer.slotted, {}}.bytes();
    }
    room = std::move(grown);
  }
  room.write_slots(slot_index(used, added, fresh.device()), fresh);
  layer = room.slot_range(0, used + added);
  layer.state = fresh.state;
}

const at::Tensor& KvCache::slot_index(int64_t begin, int64_t count, c10::Device device) {
  if (!slot_index_.defined() || slot_index_.device() != device || slot_index_.size(0) != count ||
      slot_index_begin_ != begin) {
    slot_index_ = at::arange(begin, begin + count, at::TensorOptions().dtype(at::kLong).device(device));
    slot_index_begin_ = begin;
  }
  return slot_index_;
}

void KvCache::append_slots(const at::Tensor& positions, const at::Tensor& valid) {
  positions_ = concat_slots(positions_, positions);
  valid_ = concat_slots(valid_, valid);
}

void KvCache::invalidate_last_slots(int64_t row, int64_t count) {
  const c10::InferenceMode inference;  // valid_ was made by a forward, in inference mode
  if (count > 0) valid_[row].narrow(0, slots() - count, count).fill_(false);
}

int64_t KvCache::bytes() const {
  int64_t total = 0;
  for (const LayerCache& layer : layers_) total += layer.bytes();
  return total;
}

void KvCache::keep_rows(const std::vector<int64_t>& rows) {
  bool all_in_order = static_cast<int64_t>(rows.size()) == this->rows();
  for (size_t i = 0; all_in_order && i < rows.size(); ++i) all_in_order = rows[i] == static_cast<int64_t>(i);
  if (all_in_order) return;
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
    const LayerCache& layer = layers_[i];
    if (!layer.empty()) copy.layers_[i] = layer.rows(upload_once(index, layer.device(), on_device));
  }
  copy.positions_ = positions_.index_select(0, index);
  copy.valid_ = valid_.index_select(0, index);
  copy.drop_unused_leading_slots();
  kv_bytes_copied() += copy.bytes();
  return copy;
}

void KvCache::add_rows(const KvCache& other) {
  if (other.num_layers() != num_layers())
    throw std::invalid_argument("add_rows: the caches have different numbers of layers");
  if (!other.positions_.defined()) return;
  if (!positions_.defined()) {
    const bool grow_in_place = grow_in_place_ || other.grow_in_place_;
    const int64_t reserved = std::max(reserved_, other.reserved_);
    *this = other;
    grow_in_place_ = grow_in_place;
    reserved_ = reserved;
    return;
  }
  kv_bytes_copied() += bytes() + other.bytes();
  const int64_t slots = std::max(this->slots(), other.slots());
  const int64_t mine = slots - this->slots(), theirs = slots - other.slots();
  for (int64_t i = 0; i < num_layers(); ++i) {
    const LayerCache& added = other.layers_[i];
    if (!added.empty()) layers_[i] = join_rows({layers_[i].padded(mine, 0), added.padded(theirs, 0)});
  }
  positions_ = at::cat({pad_front(positions_, mine, 0), pad_front(other.positions_, theirs, 0)});
  valid_ = at::cat({pad_front(valid_, mine, false), pad_front(other.valid_, theirs, false)});
  room_.clear();
}

void KvCache::place_rows(const KvCache& other, const std::vector<int64_t>& rows) {
  if (other.num_layers() != num_layers())
    throw std::invalid_argument("place_rows: the caches have different numbers of layers");
  if (other.rows() != static_cast<int64_t>(rows.size()))
    throw std::invalid_argument(fmt::format("place_rows: {} rows named for {} rows placed", rows.size(), other.rows()));
  if (other.slots() > slots())
    throw std::invalid_argument(fmt::format("place_rows: rows of {} slots do not fit {} slots", other.slots(), slots()));
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || rows[i] >= this->rows() || std::count(rows.begin(), rows.begin() + i, rows[i]) > 0)
      throw std::invalid_argument(fmt::format("place_rows: row {} is not a distinct row of the {} here", rows[i],
                                              this->rows()));
  }
  const c10::InferenceMode inference;  // the layers' tensors were made by forwards, in inference mode
  const int64_t begin = slots() - other.slots();
  const at::Tensor index = at::tensor(rows, at::kLong);
  at::Tensor on_device;
  for (int64_t i = 0; i < num_layers(); ++i) {
    const LayerCache& placed = other.layers_[i];
    if (placed.empty()) continue;
    if (layers_[i].empty()) throw std::invalid_argument("place_rows: a layer keeps nothing here but there");
    layers_[i].slot_range(begin, other.slots()).write_rows(upload_once(index, layers_[i].device(), on_device), placed);
  }
  kv_bytes_copied() += other.bytes();
  valid_.index_fill_(0, index, false);
  valid_.narrow(1, begin, other.slots()).index_copy_(0, index, other.valid_);
  positions_.narrow(1, begin, other.slots()).index_copy_(0, index, other.positions_);
}

void KvCache::drop_unused_leading_slots() {
  const at::Tensor used = valid_.any(0);
  int64_t first = 0;
  const auto flags = used.accessor<bool, 1>();
  while (first < used.size(0) && !flags[first]) ++first;
  if (first == 0) return;
  const int64_t left = slots() - first;
  for (LayerCache& layer : layers_) layer = layer.slot_range(first, left);
  positions_ = positions_.narrow(1, first, left);
  valid_ = valid_.narrow(1, first, left);
}

}  // namespace prefix_scorer
