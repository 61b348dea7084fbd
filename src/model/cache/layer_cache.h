#pragma once
// What one layer keeps of the tokens seen so far, whatever its mixer: tensors with a slot per token, each laid out
// [rows, heads, slots, width] (attention's keys and values), and tensors of a fixed size per row (a recurrent
// layer's state and convolution history: what the tokens so far left, after the last real one). A layer that reads
// another layer's keys and values keeps nothing. Every move of cached tokens (appended, rows kept, copied or added,
// a prefix's segments joined, prefixes stacked for cascade or gathered per row) is one of these functions, the same
// whichever kind of layer holds the tensors: slotted tensors move along slots and rows, a state along rows only,
// and a state is never summed or split: the later one replaces the earlier.

#include <ATen/ATen.h>

#include <vector>

namespace prefix_scorer {

struct LayerCache {
  std::vector<at::Tensor> slotted;  // [rows, heads, slots, width] each
  std::vector<at::Tensor> state;    // [rows, ...] each: after the last real slot

  bool empty() const { return slotted.empty() && state.empty(); }  // the layer keeps nothing
  c10::Device device() const { return slotted.empty() ? state.at(0).device() : slotted.front().device(); }
  int64_t slots() const { return slotted.empty() ? 0 : slotted.front().size(2); }
  // An attention layer's keys and values; a latent-attention layer keeps one tensor, its keys and values both.
  const at::Tensor& keys() const { return slotted.at(0); }
  const at::Tensor& values() const { return slotted.size() > 1 ? slotted.at(1) : slotted.at(0); }
  int64_t bytes() const;

  // The rows `index` picks (int64, on the tensors' device), copied.
  LayerCache rows(const at::Tensor& index) const;
  // Row `row` alone, as a view.
  LayerCache row(int64_t row) const;
  // Slots [begin, begin + count) of every row, as a view; the state as it is (callers take ranges that end at the
  // last real slot, whose state it is).
  LayerCache slot_range(int64_t begin, int64_t count) const;
  // No slots, and a zero state: what a row without tokens keeps, of this one's kind.
  LayerCache nothing_seen() const;
  // With `before` zero slots in front of its own and `after` behind them; the state as it is.
  LayerCache padded(int64_t before, int64_t after) const;
  // Writes `source`'s slotted tensors into the slots `slot_index` (int64, on the tensors' device) names, in place.
  void write_slots(const at::Tensor& slot_index, const LayerCache& source) const;
  // Writes `source`'s tensors over rows `index` (int64, on the tensors' device) of these, in place.
  void write_rows(const at::Tensor& index, const LayerCache& source) const;
  // Writes `source`'s tensors (of the same sizes) into these, which may be views.
  void copy_from(const LayerCache& source) const;
  // A copy that holds its own storage (a view's base is freed with its owner).
  LayerCache copy() const;
  // Each tensor on `device` (the same tensors when they are there).
  LayerCache to(c10::Device device) const;
};

// The parts' tensors joined along slots (one row's segments in order: the state is the last part's) or along rows
// (rows of equal slots). Every part keeps the same kind of tensors; a single part is returned as it is.
LayerCache join_slots(const std::vector<LayerCache>& parts);
LayerCache join_rows(const std::vector<LayerCache>& parts);

}  // namespace prefix_scorer
