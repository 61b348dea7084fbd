#include "scoring/prefill_scheduler.h"

#include "model/forward_batch.h"
#include "scoring/prefix_kv.h"
#include "scoring/cascade_or_gather.h"

#include <algorithm>

namespace prefix_scorer {

void PrefillScheduler::prepare(const std::vector<int64_t>& needed, size_t lookahead_from) {
  const ScoringPlan& plan = prefixes_.plan();
  std::vector<bool> queued(plan.entries.size(), false);
  // The chain of `leaf`, root first, as far as it is not live: what must be prefilled for it.
  auto missing_chain = [&](int64_t leaf, bool pin_live, std::vector<int64_t>& missing) {
    std::vector<int64_t> chain;
    for (int64_t e = leaf; e >= 0; e = plan.entries[e].parent) chain.push_back(e);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      if (queued[*it] || prefixes_.state(*it).uncacheable || plan.entries[*it].packed) continue;
      queued[*it] = true;
      if (EntryPtr entry = prefixes_.lookup(*it)) {
        if (pin_live) prefixes_.pin(entry);
      } else {
        missing.push_back(*it);
      }
    }
  };
  std::vector<int64_t> missing;
  for (int64_t e : needed) missing_chain(e, true, missing);
  prefill(missing, true);
  std::vector<int64_t> ahead;
  for (size_t k = lookahead_from; k < plan.order.size(); ++k) {
    if (static_cast<int64_t>(missing.size() + ahead.size()) >= options_.prefill_batch) break;
    missing_chain(plan.order[k].entry, false, ahead);
  }
  prefill(ahead, false);  // into free room only: evicting for a guess could throw away what is needed
}

void PrefillScheduler::prefill(std::vector<int64_t> missing, bool may_evict) {
  const ScoringPlan& plan = prefixes_.plan();
  PrefixCache& cache = prefixes_.cache();
  std::vector<bool> skipped(plan.entries.size(), false);
  // Longest segments first, so that a wave pads little; a child whose parent is not live yet waits a wave.
  auto segment = [&](int64_t e) { return prefixes_.depth(e) - prefixes_.depth(plan.entries[e].parent); };
  std::stable_sort(missing.begin(), missing.end(), [&](int64_t a, int64_t b) { return segment(a) > segment(b); });
  while (!missing.empty()) {
    std::vector<int64_t> wave, later;
    int64_t bytes = 0, longest = 0, parents_longest = 0, real = 0;
    for (int64_t e : missing) {
      const int64_t parent = plan.entries[e].parent;
      if (parent >= 0 && (prefixes_.state(parent).uncacheable || skipped[parent])) {
        skipped[e] = true;
        continue;
      }
      const bool ready = parent < 0 || prefixes_.held(parent) != nullptr;
      const int64_t len = segment(e);
      const int64_t need = len * memory_.kv_bytes_per_token + memory_.state_bytes_per_row;
      const int64_t count = static_cast<int64_t>(wave.size()) + 1;
      const int64_t after = std::max(parents_longest, prefixes_.depth(parent));
      const bool fits_batch = count <= options_.prefill_batch &&
                              std::max(longest, len) * count <= options_.max_batch_tokens &&
                              within_memory(memory_, count, std::max(longest, len), after) &&
                              within_padding(std::max(longest, len) * count, real + len);
      const bool room = may_evict ? cache.can_fit(bytes + need, count) : cache.has_room(bytes + need, count);
      if (ready && (wave.empty() || fits_batch) && room) {
        wave.push_back(e);
        bytes += need;
        longest = std::max(longest, len);
        parents_longest = after;
        real += len;
      } else if (ready && wave.empty()) {
        skipped[e] = true;  // does not fit even alone
        prefixes_.state(e).uncacheable = need > options_.max_cache_bytes || options_.max_cache_entries == 0;
      } else {
        later.push_back(e);
      }
    }
    if (wave.empty()) return;
    run_wave_(wave);
    missing = std::move(later);
  }
}

void prefill_wave(const Model& model, const PrefixScorerOptions& options, LivePrefixes& prefixes,
                  const std::vector<int64_t>& wave, ScoringStats& stats) {
  const ScoringPlan& plan = prefixes.plan();
  std::vector<EntryPtr> parents;
  std::vector<const PrefixEntry*> parent_ptrs;
  std::vector<TokenIds> segments;
  std::vector<int64_t> starts, variants;
  for (int64_t e : wave) {
    variants.push_back(plan.entries[e].rope_variant);
    const int64_t parent = plan.entries[e].parent;
    parents.push_back(parent < 0 ? nullptr : prefixes.held(parent));
    parent_ptrs.push_back(parents.back().get());
    const TokenIds& tokens = plan.entries[e].tokens;
    segments.emplace_back(tokens.begin() + prefixes.depth(parent), tokens.end());
    starts.push_back(prefixes.depth(parent));
  }
  std::vector<const TokenIds*> inputs;
  for (const auto& s : segments) inputs.push_back(&s);
  const ForwardBatch batch = make_batch(inputs, starts, variants);
  const PrefixedForward run = forward_after(model, options, parent_ptrs, batch, at::empty({0}, at::kLong), stats);
  const int64_t real = count_forward(batch, stats);
  stats.prefill_tokens += real;
  stats.prefill_padding += batch.valid.numel() - real;

  for (size_t i = 0; i < wave.size(); ++i) {
    auto entry = std::make_shared<PrefixEntry>();
    entry->tokens = plan.entries[wave[i]].tokens;
    entry->rope_variant = variants[i];
    entry->parent = parents[i];
    entry->begin = starts[i];
    const auto len = static_cast<int64_t>(segments[i].size());
    entry->layers = take_segment(run.cache, static_cast<int64_t>(i), run.own_slots, len);
    entry->bytes = kv_bytes(model, len) + state_bytes(model);
    prefixes.add(wave[i], entry);
  }
  stats.prefixes_prefilled += static_cast<int64_t>(wave.size());
}

}  // namespace prefix_scorer
