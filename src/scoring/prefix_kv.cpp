#include "scoring/prefix_kv.h"

#include "model/config/layer_spec.h"
#include "model/host_transfers.h"
#include "model/layers/mixer.h"

#include <algorithm>
#include <optional>

namespace prefix_scorer {
namespace {

// An entry's whole prefix in one layer: its ancestors' segments, then its own.
LayerCache whole_prefix(const PrefixEntry* entry, int64_t layer) {
  std::vector<LayerCache> parts;
  for (const PrefixEntry* e = entry; e != nullptr; e = e->parent.get()) parts.push_back(e->layers[layer]);
  std::reverse(parts.begin(), parts.end());
  return join_slots(parts);
}

// The distinct prefixes (null among them) of the entries, in order of first appearance.
std::vector<const PrefixEntry*> distinct_of(const std::vector<const PrefixEntry*>& entries) {
  std::vector<const PrefixEntry*> distinct;
  for (const PrefixEntry* e : entries) {
    if (std::find(distinct.begin(), distinct.end(), e) == distinct.end()) distinct.push_back(e);
  }
  return distinct;
}

bool keeps_cache(const Model& model, int64_t layer) {
  const MixerCosts costs = mixer_costs(model.spec(), layer, 1);
  return costs.cached_per_token > 0 || costs.state_bytes > 0;
}

// One layer's cache of every prefix of the stack, right-padded with zeros to the longest, on the layer's device;
// nothing for a layer that keeps none.
LayerCache stacked_layer(const Model& model, const PrefixStack& stack, int64_t layer) {
  if (!keeps_cache(model, layer)) return {};
  std::vector<LayerCache> wholes(stack.prefixes.size());
  const LayerCache* some = nullptr;  // any prefix's, the shape of the empty one's padding
  for (size_t p = 0; p < stack.prefixes.size(); ++p) {
    if (stack.prefixes[p] == nullptr) continue;
    wholes[p] = whole_prefix(stack.prefixes[p], layer);
    some = &wholes[p];
  }
  std::vector<LayerCache> rows;
  for (size_t p = 0; p < stack.prefixes.size(); ++p) {
    const LayerCache& whole = stack.prefixes[p] == nullptr ? some->nothing_seen() : wholes[p];
    rows.push_back(whole.padded(0, stack.longest - whole.slots()));
  }
  return join_rows(rows);
}

int64_t longest_of(const std::vector<const PrefixEntry*>& prefixes) {
  int64_t longest = 0;
  for (const PrefixEntry* e : prefixes) longest = std::max(longest, e == nullptr ? 0 : e->depth());
  return longest;
}

bool holds_all(const PrefixStack& stack, const std::vector<const PrefixEntry*>& prefixes) {
  return std::all_of(prefixes.begin(), prefixes.end(), [&](const PrefixEntry* e) {
    return std::find(stack.prefixes.begin(), stack.prefixes.end(), e) != stack.prefixes.end();
  });
}

// Whether `stack` has its layers made and holds every one of `distinct` at their longest: rows can gather theirs
// out of it (its other prefixes unread).
bool gathers_from(const PrefixStack& stack, const std::vector<const PrefixEntry*>& distinct) {
  return !stack.layers.empty() && stack.longest == longest_of(distinct) && holds_all(stack, distinct);
}

// The entries' distinct prefixes (`distinct`, distinct_of(entries)) in `stack` (as it is when it holds the same
// ones, or more when `more_ok`; else anew, with its layers when `with_layers`), and the stack index each row takes.
std::vector<int64_t> stack_of(const Model& model, const std::vector<const PrefixEntry*>& entries,
                              std::vector<const PrefixEntry*> distinct, PrefixStack& stack, bool with_layers,
                              bool more_ok = false) {
  const bool same = more_ok ? gathers_from(stack, distinct)
                            : distinct.size() == stack.prefixes.size() && holds_all(stack, distinct);
  if (!same || (with_layers && stack.layers.empty() && stack.longest > 0)) {
    stack = {};  // the old one goes first; on a throw below it stays empty, never half made
    PrefixStack fresh{std::move(distinct), {}, 0};
    fresh.longest = longest_of(fresh.prefixes);
    for (int64_t l = 0; with_layers && fresh.longest > 0 && l < model.config().num_layers; ++l)
      fresh.layers.push_back(stacked_layer(model, fresh, l));
    stack = std::move(fresh);
  }
  std::vector<int64_t> pick;
  for (const PrefixEntry* e : entries) pick.push_back(std::find(stack.prefixes.begin(), stack.prefixes.end(), e) - stack.prefixes.begin());
  return pick;
}

}  // namespace

KvCache gather_prefix_kv(const Model& model, const std::vector<const PrefixEntry*>& entries, PrefixStack* kept) {
  KvCache cache(model.config().num_layers);
  const auto b = static_cast<int64_t>(entries.size());
  // A kept stack holds every layer's prefixes at once, beside the rows gathered from it, which is all the forward
  // budget counts: made only where it is at most a quarter of those (few prefixes, many rows: MMLU's subjects),
  // and read by any later forward whose rows' prefixes it holds; else each layer's stack is made, read and let go
  // in turn.
  PrefixStack local;
  const std::vector<const PrefixEntry*> distinct = distinct_of(entries);
  const bool keep = kept != nullptr && (gathers_from(*kept, distinct) || 4 * static_cast<int64_t>(distinct.size()) <= b);
  PrefixStack& stack = keep ? *kept : local;
  const std::vector<int64_t> picks = stack_of(model, entries, distinct, stack, keep, /*more_ok=*/true);
  if (stack.longest == 0) return cache;
  const at::Tensor pick = at::tensor(picks, at::kLong);
  at::Tensor on_device;
  for (int64_t l = 0; l < cache.num_layers(); ++l) {
    if (!keeps_cache(model, l)) continue;
    const LayerCache stacked = stack.layers.empty() ? stacked_layer(model, stack, l) : stack.layers[l];
    cache.append_layer(l, stacked.rows(upload_once(pick, model.layer_device(l), on_device)));
  }
  const at::Tensor positions = at::arange(stack.longest, at::kLong).expand({b, stack.longest}).contiguous();
  at::Tensor depths = at::empty({b, 1}, at::kLong);
  int64_t* depth = depths.data_ptr<int64_t>();
  for (int64_t i = 0; i < b; ++i) depth[i] = entries[i] == nullptr ? 0 : entries[i]->depth();
  cache.append_slots(positions, positions < depths);
  return cache;
}

std::optional<SharedPrefixes> distinct_prefix_kv(const Model& model, const std::vector<const PrefixEntry*>& entries,
                                                 PrefixStack* kept) {
  PrefixStack local;
  PrefixStack& stack = kept != nullptr ? *kept : local;
  const std::vector<int64_t> picks = stack_of(model, entries, distinct_of(entries), stack, true);
  if (stack.longest == 0) return std::nullopt;
  SharedPrefixes shared;
  shared.layers = stack.layers;
  std::vector<int64_t> lengths;
  for (const PrefixEntry* e : stack.prefixes) lengths.push_back(e == nullptr ? 0 : e->depth());
  shared.lengths = at::tensor(lengths, at::kLong);
  shared.row_prefix = at::tensor(picks, at::kLong);
  return shared;
}

std::vector<LayerCache> take_segment(const KvCache& cache, int64_t row, int64_t begin, int64_t len) {
  std::vector<LayerCache> segment;
  for (int64_t l = 0; l < cache.num_layers(); ++l)
    segment.push_back(cache.layer(l).row(row).slot_range(begin, len).copy());
  return segment;
}

int64_t kv_bytes(const Model& model, int64_t tokens, bool expanded) {
  int64_t widths = 0;  // of every layer's cache, per token
  for (int64_t l = 0; l < model.config().num_layers; ++l) {
    const MixerCosts costs = mixer_costs(model.spec(), l, 1);
    widths += expanded ? costs.expanded_per_token : costs.cached_per_token;
  }
  return widths * tokens * static_cast<int64_t>(c10::elementSize(model.dtype()));
}

int64_t state_bytes(const Model& model) {
  int64_t total = 0;
  const auto dtype_bytes = static_cast<int64_t>(c10::elementSize(model.dtype()));
  for (int64_t l = 0; l < model.config().num_layers; ++l) total += mixer_costs(model.spec(), l, dtype_bytes).state_bytes;
  return total;
}

}  // namespace prefix_scorer
