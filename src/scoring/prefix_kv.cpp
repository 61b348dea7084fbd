#include "scoring/prefix_kv.h"

#include "model/host_transfers.h"
#include "model/layer_spec.h"

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

bool keeps_cache(const Model& model, int64_t layer) {
  return model.spec().cached_per_token(layer) > 0 || model.spec().state_bytes(layer, 1) > 0;
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

// The stack of the entries' distinct prefixes (`kept` as it is when it stacks the same ones), and the stack index
// each row takes.
std::pair<const PrefixStack*, std::vector<int64_t>> stack_of(const Model& model,
                                                            const std::vector<const PrefixEntry*>& entries,
                                                            PrefixStack& kept) {
  std::vector<const PrefixEntry*> distinct;
  for (const PrefixEntry* e : entries) {
    if (std::find(distinct.begin(), distinct.end(), e) == distinct.end()) distinct.push_back(e);
  }
  const bool same = distinct.size() == kept.prefixes.size() &&
                    std::all_of(distinct.begin(), distinct.end(), [&](const PrefixEntry* e) {
                      return std::find(kept.prefixes.begin(), kept.prefixes.end(), e) != kept.prefixes.end();
                    });
  if (!same) {
    kept = {std::move(distinct), {}, 0};
    for (const PrefixEntry* e : kept.prefixes) kept.longest = std::max(kept.longest, e == nullptr ? 0 : e->depth());
    if (kept.longest > 0) {
      for (int64_t l = 0; l < model.config().num_layers; ++l) kept.layers.push_back(stacked_layer(model, kept, l));
    }
  }
  std::vector<int64_t> pick;
  for (const PrefixEntry* e : entries) pick.push_back(std::find(kept.prefixes.begin(), kept.prefixes.end(), e) - kept.prefixes.begin());
  return {&kept, std::move(pick)};
}

}  // namespace

KvCache gather_prefix_kv(const Model& model, const std::vector<const PrefixEntry*>& entries, PrefixStack* kept) {
  KvCache cache(model.config().num_layers);
  PrefixStack local;
  const auto [stack, picks] = stack_of(model, entries, kept == nullptr ? local : *kept);
  if (stack->longest == 0) return cache;
  const at::Tensor pick = at::tensor(picks, at::kLong);
  at::Tensor on_device;
  for (int64_t l = 0; l < cache.num_layers(); ++l) {
    if (!keeps_cache(model, l)) continue;
    cache.append_layer(l, stack->layers[l].rows(upload_once(pick, model.layer_device(l), on_device)));
  }
  const auto b = static_cast<int64_t>(entries.size());
  const at::Tensor positions = at::arange(stack->longest, at::kLong).expand({b, stack->longest}).contiguous();
  at::Tensor depths = at::empty({b, 1}, at::kLong);
  int64_t* depth = depths.data_ptr<int64_t>();
  for (int64_t i = 0; i < b; ++i) depth[i] = entries[i] == nullptr ? 0 : entries[i]->depth();
  cache.append_slots(positions, positions < depths);
  return cache;
}

std::optional<SharedPrefixes> distinct_prefix_kv(const Model& model, const std::vector<const PrefixEntry*>& entries,
                                                 PrefixStack* kept) {
  PrefixStack local;
  const auto [stack, picks] = stack_of(model, entries, kept == nullptr ? local : *kept);
  if (stack->longest == 0) return std::nullopt;
  SharedPrefixes shared;
  shared.layers = stack->layers;
  std::vector<int64_t> lengths;
  for (const PrefixEntry* e : stack->prefixes) lengths.push_back(e == nullptr ? 0 : e->depth());
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
  for (int64_t l = 0; l < model.config().num_layers; ++l)
    widths += expanded ? model.spec().expanded_per_token(l) : model.spec().cached_per_token(l);
  return widths * tokens * static_cast<int64_t>(c10::elementSize(model.dtype()));
}

int64_t state_bytes(const Model& model) {
  int64_t total = 0;
  const auto dtype_bytes = static_cast<int64_t>(c10::elementSize(model.dtype()));
  for (int64_t l = 0; l < model.config().num_layers; ++l) total += model.spec().state_bytes(l, dtype_bytes);
  return total;
}

}  // namespace prefix_scorer
