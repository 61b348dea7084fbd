#pragma once
// What a forward's layers take in besides their input, part by part (Model::forward_together): each part's
// positions, validity, masks, rotary tables and prefix groups, laid out on the host once and made on each device its
// layers run on when a layer there first asks; and the moves between a part's packed real tokens and its padded rows.

#include "model/cache/kv_cache.h"
#include "model/forward_batch.h"
#include "model/ops/attention.h"
#include "model/ops/rope.h"
#include "prefix_scorer/model.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <deque>
#include <stdexcept>
#include <utility>
#include <vector>

namespace prefix_scorer {

// What every layer on one device shares during a forward: the attention masks (one per window the layers use, each
// folded and made additive once per query-group size, when a layer first asks for it), the rotary tables (one per
// rope of the model's), and the rows' prefix groups for cascade attention.
struct DeviceInputs {
  struct Mask {
    int64_t window = 0, group = 1;
    FoldedMask mask;
  };
  c10::Device device = c10::kCPU;
  at::ScalarType dtype = at::kFloat;
  std::vector<std::pair<int64_t, at::Tensor>> plain_masks;  // (window, mask before folding)
  mutable std::deque<Mask> masks;  // a deque: a mask handed out stays where it is when another is folded
  std::vector<RotaryTables> rotary;  // by ModelSpec::ropes' index
  at::Tensor query_scale;  // [batch, 1, len, 1]: ModelSpec::query_scale's factors (in fp32 or the dtype); else undefined
  PrefixGroups groups;
  // What a recurrent layer takes in of right-padded rows: [b, t] fp32, 1 at a real token, and [b] int64, the real
  // tokens of each row (both undefined when every token is real); each row's shared prefix ([b] int64, with them).
  at::Tensor token_valid, row_lengths, row_prefix;
  // Where the forward runs its token-wise ops on its real tokens only (packed as [1, n, width]): their indexes in
  // the flat [rows * len] batch ([n] int64); attention's core takes them padded back to [rows, len]. Undefined: the
  // forward runs every op on the whole batch.
  at::Tensor real_tokens;
  int64_t rows = 0, len = 0;
  int64_t first = 0, real_count = 0;  // where the part's real tokens sit among the forward's packed ones

  const FoldedMask& mask(int64_t window, int64_t group) const {
    for (const Mask& m : masks)
      if (m.window == window && m.group == group) return m.mask;
    for (const auto& [w, plain] : plain_masks) {
      if (w != window) continue;
      masks.push_back({window, group, fold_mask(plain, group, dtype)});
      return masks.back().mask;
    }
    throw std::logic_error(fmt::format("forward: no mask was built for window {}", window));
  }
};

// One part of a forward (Model::forward_together) as a layer sees it: its inputs on the layer's device, its cache,
// its rows' shared prefixes, and the keys and values its layers produced.
struct PartContext {
  const DeviceInputs* in;
  KvCache* cache;
  const SharedPrefixes* shared;
  std::vector<LayerCache>* produced;
};

// A token-wise op's output [.., width] as attention takes it, [rows, len, width]: where the forward packs its real
// tokens, scattered to their places with zeros at padding (never attended to, their outputs never read).
at::Tensor padded(const at::Tensor& x, const DeviceInputs& in);

// Attention's output [rows, len, width] as the token-wise ops after it take it: the real tokens alone, [1, n,
// width], where the forward packs them.
at::Tensor real_only(const at::Tensor& x, const DeviceInputs& in);

// One part of a forward: checked and laid out on the host when made, its DeviceInputs made on each device when
// first asked for (`on`). `inv_freqs` and `rope_variants` are the model's rotary frequencies by rope and variant.
// `first` is where its tokens start among the forward's; where the forward runs several parts (`together`), every
// part packs its real tokens.
class PartInputs {
 public:
  PartInputs(const Model& model, const std::vector<at::Tensor>& inv_freqs, int64_t rope_variants,
             const ForwardPart& part, bool together, int64_t first);
  PartInputs(const PartInputs&) = delete;
  PartInputs& operator=(const PartInputs&) = delete;

  const DeviceInputs& on(c10::Device device);
  const ForwardPart& part() const { return part_; }
  int64_t rows() const { return b_; }
  int64_t len() const { return t_; }
  int64_t first() const { return first_; }
  // The real tokens' flat indexes where the part packs them ([n] int64 on the CPU), else undefined.
  const at::Tensor& real_index() const { return real_index_; }
  // The tokens it puts among the forward's: its real ones where it packs them, else all.
  int64_t token_count() const { return real_index_.defined() ? real_index_.numel() : b_ * t_; }
  // The positions it scores, among its real tokens where it packs them.
  const at::Tensor& scored() const { return scored_; }
  const at::Tensor& positions() const { return positions_; }
  const at::Tensor& valid() const { return valid_; }
  // Each layer's keys and values (after the cache's), held while a later layer reads them.
  std::vector<LayerCache>& produced() { return produced_; }
  // Records the positions of the slots the forward appended to the part's cache, and which a later forward over it
  // may reach (only the first segment's trunk is a prefix).
  void record_slots() const;

 private:
  const Model& model_;
  const std::vector<at::Tensor>& inv_freqs_;
  const ForwardPart part_;
  int64_t b_ = 0, t_ = 0, first_ = 0;
  at::Tensor positions_, valid_, key_positions_, key_valid_, variants_, state_valid_, state_lengths_;
  PackedKeys keys_;
  PrefixGroups groups_;
  bool packed_ = false, causal_ = false;
  at::Tensor real_index_, scored_;
  std::deque<DeviceInputs> per_device_;  // a deque: inputs handed out stay where they are
  std::vector<LayerCache> produced_;
};

}  // namespace prefix_scorer
