#pragma once
// What one layer keeps of the tokens seen so far, whatever its mixer: tensors with a slot per token, each laid out
// [rows, heads, slots, width] (attention's keys and values today; the latent of latent attention and the state of a
// recurrent layer come with those mixers). A layer that reads another layer's keys and values keeps nothing. Every
// move of cached tokens (appended, rows kept, copied or added, a prefix's segments joined, prefixes stacked for
// cascade or gathered per row) is one of these functions, the same whichever kind of layer holds the tensors.

#include <ATen/ATen.h>

#include <vector>

namespace prefix_scorer {

struct LayerCache {
  std::vector<at::Tensor> slotted;  // empty: the layer keeps nothing

  bool empty() const { return slotted.empty(); }
  int64_t slots() const { return empty() ? 0 : slotted.front().size(2); }
  // An attention layer's keys and values.
  const at::Tensor& keys() const { return slotted.at(0); }
  const at::Tensor& values() const { return slotted.at(1); }
  int64_t bytes() const;

  // The rows `index` picks (int64, on the tensors' device), copied.
  LayerCache rows(const at::Tensor& index) const;
  // Row `row` alone, as a view.
  LayerCache row(int64_t row) const;
  // Slots [begin, begin + count) of every row, as a view.
  LayerCache slot_range(int64_t begin, int64_t count) const;
  // With `before` zero slots in front of its own and `after` behind them.
  LayerCache padded(int64_t before, int64_t after) const;
  // Writes `source`'s tensors into the slots `slot_index` (int64, on the tensors' device) names, in place.
  void write_slots(const at::Tensor& slot_index, const LayerCache& source) const;
  // Writes `source`'s tensors (of the same sizes) into these, which may be views.
  void copy_from(const LayerCache& source) const;
  // A copy that holds its own storage (a view's base is freed with its owner).
  LayerCache copy() const;
  // Each tensor on `device` (the same tensors when they are there).
  LayerCache to(c10::Device device) const;
};

// The parts' tensors joined along slots (one row's segments in order) or along rows (rows of equal slots). Every
// part keeps the same kind of tensors; a single part is returned as it is.
LayerCache join_slots(const std::vector<LayerCache>& parts);
LayerCache join_rows(const std::vector<LayerCache>& parts);

}  // namespace prefix_scorer
