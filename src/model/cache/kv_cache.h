#pragma once
// What each layer keeps of the tokens seen so far (layer_cache.h), on that layer's device, plus each slot's
// position and validity (padding slots are invalid and never attended to). A cache grows by appending slots to
// every row; a generation batch also drops and adds rows. Every copy of cached keys and values already held (not the
// slots a forward appends) is counted in kv_bytes_copied(), so that a run can show how much it moved.

#include "model/cache/layer_cache.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

namespace prefix_scorer {

// A few shared prefixes' cached tokens, and which one each row of a batch continues: the input of cascade
// attention, where the prefix part is computed once for all the suffix queries of its rows.
struct SharedPrefixes {
  std::vector<LayerCache> layers;  // [prefixes, heads, longest, width] tensors per layer, on the layer's device
  at::Tensor lengths;              // [prefixes] int64 on the CPU; slots past a prefix's length are padding
  at::Tensor row_prefix;           // [batch] int64 on the CPU: the prefix each row continues
};

// Bytes of cached tokens this thread's caches copied after they were first written: room grown, rows kept, added or
// placed, layers joined by concatenation.
int64_t& kv_bytes_copied();

class KvCache {
 public:
  explicit KvCache(int64_t num_layers) : layers_(num_layers) {}

  int64_t num_layers() const { return static_cast<int64_t>(layers_.size()); }
  int64_t slots() const { return positions_.defined() ? positions_.size(1) : 0; }
  const LayerCache& layer(int64_t i) const { return layers_.at(i); }
  // [batch, slots] int64 and bool, on the CPU; undefined while the cache is empty.
  const at::Tensor& positions() const { return positions_; }
  const at::Tensor& valid() const { return valid_; }

  // Layers that keep nothing stay empty, and every operation below passes them by.
  // Appends new slots to layer i: into the room left when the cache grows in place, else by concatenation.
  void append_layer(int64_t i, const LayerCache& fresh);
  // From now on, appends write into preallocated room that doubles when full (for caches that grow by a slot
  // per step), so that a step copies only its own slots.
  void grow_in_place() { grow_in_place_ = true; }
  // When growing in place: room for `slots` slots in all, made at the next append (a generation knows how far its
  // rows will grow), so that appends up to there copy nothing already held; past it the room doubles again.
  void reserve(int64_t slots) { reserved_ = std::max(reserved_, slots); }
  // Records the positions and validity of the slots the next forward appends.
  void append_slots(const at::Tensor& positions, const at::Tensor& valid);
  // Bytes held by every layer on all devices.
  int64_t bytes() const;

  // Keeps rows `rows` (in that order) and drops the others, then the leading slots no kept row uses.
  void keep_rows(const std::vector<int64_t>& rows);
  // A copy of rows `rows` (in that order), without the leading slots none of them uses.
  KvCache copy_rows(const std::vector<int64_t>& rows) const;
  // Appends the rows of `other` (same layers and devices): the shorter side is padded in front with invalid
  // slots, so that both end at the same slot and the next append continues every row. Into an empty cache, `other`
  // is taken as it is, with its room.
  void add_rows(const KvCache& other);
  int64_t rows() const { return positions_.defined() ? positions_.size(0) : 0; }
  // Writes the rows of `other` (same layers and devices, at most as many slots) over rows `rows` of this cache, in
  // place, ending at its last slot; their slots before are made invalid. Nothing else is copied or moved.
  void place_rows(const KvCache& other, const std::vector<int64_t>& rows);
  // Makes the last `count` slots of row `row` invalid (a draft's rejected tokens): never attended to again.
  void invalidate_last_slots(int64_t row, int64_t count);

 private:
  void drop_unused_leading_slots();
  // Slots [begin, begin + count) as int64 on `device`: made once for all the layers that append there in a forward.
  const at::Tensor& slot_index(int64_t begin, int64_t count, c10::Device device);

  std::vector<LayerCache> layers_;
  std::vector<LayerCache> room_;  // when growing in place: the storage layers_ are views of
  bool grow_in_place_ = false;
  int64_t reserved_ = 0;
  at::Tensor slot_index_;
  int64_t slot_index_begin_ = 0;
  at::Tensor positions_;
  at::Tensor valid_;
};

}  // namespace prefix_scorer
