#include "prefix_scorer/scorer.h"

#include "batching.h"
#include "device_memory.h"
#include "planner.h"
#include "prefix_cache.h"
#include "prefix_view.h"
#include "requests.h"
#include "rolling.h"
#include "rows.h"

#include <fmt/format.h>

#include <algorithm>

namespace prefix_scorer {
namespace {

// One loglikelihood call: its plan, which planned prefixes are live in the cache, and which are still needed.
class Call {
 public:
  Call(const Model& model, const PrefixScorerOptions& options, PrefixCache& cache,
       const std::vector<Request>& requests, ScoringResult& result)
      : model_(model), options_(options), cache_(cache), requests_(requests), result_(result), stats_(result.stats),
        memory_(batch_memory(model, options.max_batch_bytes)) {
    rows_ = make_rows(requests, model.config().vocab_size, model.config().window(options.max_length), true,
                      stats_.truncated);
    // Half the cache budget per window leaves room to prefill the next window's prefixes ahead.
    const int64_t window_tokens = std::max<int64_t>(1, options.max_cache_bytes / 2 / kv_bytes(model, 1));
    plan_ = plan_prefixes(rows_, options.min_prefix_len, window_tokens);
    const size_t n = plan_.entries.size();
    live_.resize(n);
    uncacheable_.assign(n, false);
    seen_.assign(n, false);
    pending_.assign(n, 0);
    for (const auto& entry : plan_.entries) {
      if (entry.parent >= 0) ++pending_[entry.parent];
    }
    for (const auto& row : plan_.order) {
      if (row.entry >= 0) ++pending_[row.entry];
    }
  }

  // Unpins what an interrupted batch left pinned, and drops the call's entries unless they are to be kept.
  ~Call() {
    unpin();
    for (auto it = live_.rbegin(); it != live_.rend(); ++it) {  // children before parents
      if (auto entry = it->lock(); entry && !options_.keep_cache) cache_.erase(entry);
    }
  }

  void run() {
    const auto total = static_cast<int64_t>(plan_.order.size());
    size_t begin = 0;
    for (const size_t window_end : plan_.window_ends) {
      // The planner sorted each window by descending suffix length, as plan_batches wants.
      std::vector<int64_t> lengths, prefixes;
      for (size_t k = begin; k < window_end; ++k) {
        lengths.push_back(suffix_len(plan_.order[k]));
        prefixes.push_back(depth(plan_.order[k].entry));
      }
      for (const auto& [first, last] :
           plan_batches(lengths, options_.max_batch_tokens, options_.max_batch_rows, prefixes, memory_))
        run_batch(begin + first, begin + last, total);
      begin = window_end;
    }
  }

 private:
  void run_batch(size_t begin, size_t end, int64_t total) {
    std::vector<int64_t> needed;
    for (size_t k = begin; k < end; ++k) needed.push_back(plan_.order[k].entry);
    prepare(needed, end);
    score_suffixes(begin, end);
    unpin();
    for (size_t k = begin; k < end; ++k) finish(plan_.order[k].entry);
    if (options_.on_progress) options_.on_progress(static_cast<int64_t>(end), total);
  }
  int64_t depth(int64_t entry) const { return entry < 0 ? 0 : plan_.entries[entry].depth(); }

  int64_t suffix_len(const PlannedRow& r) const {
    return static_cast<int64_t>(rows_[r.row].input.size()) - depth(r.entry);
  }

  // The live cache entry of a planned prefix, looking it up in the cache (kept from an earlier call) when this
  // call has not made it live yet.
  EntryPtr live(int64_t e) {
    if (EntryPtr entry = live_[e].lock()) return entry;
    EntryPtr found = cache_.find(plan_.entries[e].tokens);
    if (found) {
      live_[e] = found;
      stats_.cache_hits += seen_[e] ? 0 : 1;
      seen_[e] = true;
    }
    return found;
  }

  void pin(const EntryPtr& entry) {
    ++entry->pins;
    pinned_.push_back(entry);
  }

  void unpin() {
    for (auto& entry : pinned_) --entry->pins;
    pinned_.clear();
  }

  // Makes the prefixes of the rows about to run (and their ancestors) live and pinned, prefilling the missing
  // ones first; then, with the room left, prefills missing prefixes of the rows that follow, up to
  // prefill_batch of them.
  void prepare(const std::vector<int64_t>& needed, size_t lookahead_from) {
    std::vector<bool> queued(plan_.entries.size(), false);
    // The chain of `leaf`, root first, as far as it is not live: what must be prefilled for it.
    auto missing_chain = [&](int64_t leaf, bool pin_live, std::vector<int64_t>& missing) {
      std::vector<int64_t> chain;
      for (int64_t e = leaf; e >= 0; e = plan_.entries[e].parent) chain.push_back(e);
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        if (queued[*it] || uncacheable_[*it]) continue;
        queued[*it] = true;
        if (EntryPtr entry = live(*it)) {
          if (pin_live) pin(entry);
        } else {
          missing.push_back(*it);
        }
      }
    };
    std::vector<int64_t> missing;
    for (int64_t e : needed) missing_chain(e, true, missing);
    prefill(missing, true);
    std::vector<int64_t> ahead;
    for (size_t k = lookahead_from; k < plan_.order.size(); ++k) {
      if (static_cast<int64_t>(missing.size() + ahead.size()) >= options_.prefill_batch) break;
      missing_chain(plan_.order[k].entry, false, ahead);
    }
    prefill(ahead, false);  // into free room only: evicting for a guess could throw away what is needed
  }

  // Prefills `missing` (parents listed before children) in waves whose parents are live, each wave within the
  // batch budgets and what the cache can hold now. A prefix that does not fit now is skipped (its rows in this
  // batch fall back to a shorter prefix; a later batch tries again); one larger than the whole budget, for good.
  void prefill(std::vector<int64_t> missing, bool may_evict) {
    std::vector<bool> skipped(plan_.entries.size(), false);
    // Longest segments first, so that a wave pads little; a child whose parent is not live yet waits a wave.
    auto segment = [&](int64_t e) { return depth(e) - depth(plan_.entries[e].parent); };
    std::stable_sort(missing.begin(), missing.end(), [&](int64_t a, int64_t b) { return segment(a) > segment(b); });
    while (!missing.empty()) {
      std::vector<int64_t> wave, later;
      int64_t bytes = 0, longest = 0, parents_longest = 0;
      for (int64_t e : missing) {
        const int64_t parent = plan_.entries[e].parent;
        if (parent >= 0 && (uncacheable_[parent] || skipped[parent])) {
          skipped[e] = true;
          continue;
        }
        const bool ready = parent < 0 || !live_[parent].expired();
        const int64_t len = segment(e);
        const int64_t need = kv_bytes(model_, len);
        const int64_t count = static_cast<int64_t>(wave.size()) + 1;
        const int64_t after = std::max(parents_longest, depth(parent));
        const bool fits_batch = count <= options_.prefill_batch &&
                                std::max(longest, len) * count <= options_.max_batch_tokens &&
                                forward_bytes(memory_, count, std::max(longest, len), after) <= memory_.max_bytes;
        const bool room = may_evict ? cache_.can_fit(bytes + need, count) : cache_.has_room(bytes + need, count);
        if (ready && (wave.empty() || fits_batch) && room) {
          wave.push_back(e);
          bytes += need;
          longest = std::max(longest, len);
          parents_longest = after;
        } else if (ready && wave.empty()) {
          skipped[e] = true;  // does not fit even alone
          uncacheable_[e] = need > options_.max_cache_bytes || options_.max_cache_entries == 0;
        } else {
          later.push_back(e);
        }
      }
      if (wave.empty()) return;
      run_prefill(wave);
      missing = std::move(later);
    }
  }

  void run_prefill(const std::vector<int64_t>& wave) {
    std::vector<EntryPtr> parents;
    std::vector<const PrefixEntry*> parent_ptrs;
    std::vector<TokenIds> segments;
    std::vector<int64_t> starts;
    for (int64_t e : wave) {
      const int64_t parent = plan_.entries[e].parent;
      parents.push_back(parent < 0 ? nullptr : live_[parent].lock());
      parent_ptrs.push_back(parents.back().get());
      const TokenIds& tokens = plan_.entries[e].tokens;
      segments.emplace_back(tokens.begin() + depth(parent), tokens.end());
      starts.push_back(depth(parent));
    }
    std::vector<const TokenIds*> inputs;
    for (const auto& s : segments) inputs.push_back(&s);
    const ForwardBatch batch = make_batch(inputs, starts);
    const PrefixedForward run = forward_after(parent_ptrs, batch, at::empty({0}, at::kLong));
    stats_.prefill_tokens += count_forward(batch, stats_);

    for (size_t i = 0; i < wave.size(); ++i) {
      auto entry = std::make_shared<PrefixEntry>();
      entry->tokens = plan_.entries[wave[i]].tokens;
      entry->parent = parents[i];
      entry->begin = starts[i];
      entry->layers =
          take_segment(run.cache, static_cast<int64_t>(i), run.own_slots, static_cast<int64_t>(segments[i].size()));
      entry->bytes = kv_bytes(model_, static_cast<int64_t>(segments[i].size()));
      if (!cache_.insert(entry))
        throw std::logic_error("prefix cache refused an entry it had room for");  // prefill() checked the room
      pin(entry);
      live_[wave[i]] = entry;
      seen_[wave[i]] = true;
    }
    stats_.prefixes_prefilled += static_cast<int64_t>(wave.size());
    stats_.cache_misses += static_cast<int64_t>(wave.size());
  }

  struct PrefixedForward {
    at::Tensor logprobs;
    KvCache cache;      // holds the batch's own keys and values from slot own_slots on
    int64_t own_slots;
  };

  // Cascade or gather for a forward whose rows continue `prefixes` (see cascade_min_prefix_len). Measured on the
  // CPU: cascade ties gather at 600-token prefixes, wins from 1,000 tokens on, and loses ~4% at 100.
  bool use_cascade(const std::vector<const PrefixEntry*>& prefixes) const {
    const int64_t threshold = options_.cascade_min_prefix_len;
    if (threshold < 0) return false;
    if (threshold == 0) return true;
    int64_t tokens = 0;
    std::vector<const PrefixEntry*> distinct;
    for (const PrefixEntry* p : prefixes) {
      tokens += p == nullptr ? 0 : p->depth();
      if (std::find(distinct.begin(), distinct.end(), p) == distinct.end()) distinct.push_back(p);
    }
    const auto rows = static_cast<int64_t>(prefixes.size());
    return rows > static_cast<int64_t>(distinct.size()) && tokens >= threshold * rows;
  }

  // Runs `batch` after each row's prefix (null: none): by cascade attention over the distinct prefixes, or over a
  // copy of each row's prefix gathered into a batch cache.
  PrefixedForward forward_after(const std::vector<const PrefixEntry*>& prefixes, const ForwardBatch& batch,
                                const at::Tensor& score_rows) {
    if (use_cascade(prefixes)) {
      if (auto shared = shared_prefixes(model_, prefixes)) {
        if (model_.config().sliding_window == 0) {
          KvCache own(model_.config().num_layers);
          at::Tensor logprobs = model_.forward(batch, &own, score_rows, &*shared);
          ++stats_.cascade_forwards;
          return {std::move(logprobs), std::move(own), 0};
        }
        ++stats_.cascade_fallbacks;  // the window's mask needs each row's prefix positions: gather
      }
    }
    KvCache view = prefix_view(model_, prefixes);
    const int64_t own_slots = view.slots();
    at::Tensor logprobs = model_.forward(batch, &view, score_rows);
    return {std::move(logprobs), std::move(view), own_slots};
  }

  // A row to run from `start` on, after the cached `prefix` holding its tokens before `start` (null: none).
  struct Suffix {
    const ScoringRow* row;
    EntryPtr prefix;
    int64_t start;
  };

  // Runs the suffixes of rows [begin, end) after their prefixes (the deepest live one of each row's chain). A
  // row whose prefix could not be cached runs a longer suffix, so the rows are re-split under the budgets.
  void score_suffixes(size_t begin, size_t end) {
    std::vector<Suffix> suffixes;
    for (size_t k = begin; k < end; ++k) {
      const PlannedRow& planned = plan_.order[k];
      int64_t e = planned.entry;
      EntryPtr entry;
      while (e >= 0 && !(entry = live_[e].lock())) e = plan_.entries[e].parent;
      stats_.fallbacks += e != planned.entry ? 1 : 0;
      suffixes.push_back({&rows_[planned.row], entry, depth(e)});
    }
    auto len = [](const Suffix& s) { return static_cast<int64_t>(s.row->input.size()) - s.start; };
    std::stable_sort(suffixes.begin(), suffixes.end(), [&](const Suffix& a, const Suffix& b) { return len(a) > len(b); });
    std::vector<int64_t> lengths, prefixes;
    for (const auto& s : suffixes) {
      lengths.push_back(len(s));
      prefixes.push_back(s.start);
    }
    for (const auto& [first, last] :
         plan_batches(lengths, options_.max_batch_tokens, options_.max_batch_rows, prefixes, memory_))
      score_suffix_batch(std::vector<Suffix>(suffixes.begin() + first, suffixes.begin() + last));
  }

  void score_suffix_batch(const std::vector<Suffix>& suffixes) {
    std::vector<const ScoringRow*> rows;
    std::vector<const PrefixEntry*> prefixes;
    std::vector<TokenIds> tokens;
    std::vector<int64_t> starts, lengths, scored;
    for (const auto& s : suffixes) {
      rows.push_back(s.row);
      prefixes.push_back(s.prefix.get());
      tokens.emplace_back(s.row->input.begin() + s.start, s.row->input.end());
      starts.push_back(s.start);
      lengths.push_back(static_cast<int64_t>(tokens.back().size()));
      scored.push_back(s.row->scored);
    }
    std::vector<const TokenIds*> inputs;
    for (const auto& t : tokens) inputs.push_back(&t);
    const ForwardBatch batch = make_batch(inputs, starts);
    const at::Tensor scored_rows = last_positions(lengths, scored, batch.tokens.size(1));
    gather_scores(forward_after(prefixes, batch, scored_rows).logprobs, rows, requests_, result_.scores);
    stats_.suffix_tokens += count_forward(batch, stats_);
    stats_.scored_rows += scored_rows.numel();
  }

  // A row of `entry` is done: prefixes no pending row needs any more leave the call (and the cache, unless
  // entries are kept), ancestors too once their last child is gone.
  void finish(int64_t e) {
    while (e >= 0 && --pending_[e] == 0) {
      if (EntryPtr entry = live_[e].lock(); entry && !options_.keep_cache) cache_.erase(entry);
      live_[e].reset();
      e = plan_.entries[e].parent;
    }
  }

  const Model& model_;
  const PrefixScorerOptions& options_;
  PrefixCache& cache_;
  const std::vector<Request>& requests_;
  ScoringResult& result_;
  ScoringStats& stats_;
  const BatchMemory memory_;
  std::vector<ScoringRow> rows_;
  ScoringPlan plan_;
  std::vector<std::weak_ptr<PrefixEntry>> live_;
  std::vector<bool> uncacheable_, seen_;
  std::vector<int64_t> pending_;  // rows and child prefixes of this call still to run
  std::vector<EntryPtr> pinned_;
};

// Adds a call's counters to the totals; the cache's size is a state, not a count, and peak is a maximum.
void add_stats(ScoringStats& total, const ScoringStats& s) {
  for (const StatsField& f : stats_fields()) {
    if (f.member == &ScoringStats::entries_held || f.member == &ScoringStats::bytes_held) continue;
    total.*f.member = f.member == &ScoringStats::peak_bytes ? std::max(total.*f.member, s.*f.member)
                                                             : total.*f.member + s.*f.member;
  }
}

void validate_prefix_options(const PrefixScorerOptions& o) {
  validate_options(o);
  if (o.max_batch_bytes < 0) throw std::invalid_argument(fmt::format("max_batch_bytes must be >= 0, got {}", o.max_batch_bytes));
  if (o.min_prefix_len < 1) throw std::invalid_argument(fmt::format("min_prefix_len must be >= 1, got {}", o.min_prefix_len));
  if (o.prefill_batch < 1) throw std::invalid_argument(fmt::format("prefill_batch must be >= 1, got {}", o.prefill_batch));
  if (o.max_cache_bytes < 0) throw std::invalid_argument(fmt::format("max_cache_bytes must be >= 0, got {}", o.max_cache_bytes));
  if (o.max_cache_entries < 0)
    throw std::invalid_argument(fmt::format("max_cache_entries must be >= 0, got {}", o.max_cache_entries));
}

}  // namespace

PrefixScorer::PrefixScorer(std::shared_ptr<const Model> model, PrefixScorerOptions options)
    : model_(std::move(model)),
      options_(std::move(options)),
      cache_(std::make_unique<PrefixCache>(options_.max_cache_bytes, options_.max_cache_entries)) {
  if (!model_) throw std::invalid_argument("PrefixScorer needs a model");
  validate_prefix_options(options_);
  if (options_.max_batch_bytes == 0) options_.max_batch_bytes = default_batch_bytes(model_->layer_device(0));
}

PrefixScorer::~PrefixScorer() = default;

ScoringResult PrefixScorer::loglikelihood(const std::vector<Request>& requests) {
  std::lock_guard<std::mutex> lock(mutex_);
  return score_locked(requests);
}

ScoringResult PrefixScorer::score_locked(const std::vector<Request>& requests) {
  ScoringResult result;
  result.scores.resize(requests.size());
  result.stats.requests = static_cast<int64_t>(requests.size());
  cache_->reset_peak();
  const int64_t evictions_before = cache_->evictions();
  {
    Call call(*model_, options_, *cache_, requests, result);
    call.run();
  }
  result.stats.evictions = cache_->evictions() - evictions_before;
  result.stats.peak_bytes = cache_->peak_bytes();
  result.stats.entries_held = cache_->entries();
  result.stats.bytes_held = cache_->bytes();
  add_stats(totals_, result.stats);
  return result;
}

ScoringResult PrefixScorer::loglikelihood_rolling(const std::vector<TokenIds>& documents, int64_t prefix_token) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t max_length = model_->config().window(options_.max_length);
  const int64_t vocab_size = model_->config().vocab_size;
  check_token_ids({prefix_token}, vocab_size, "loglikelihood_rolling: prefix_token");
  std::vector<Request> windows;
  std::vector<size_t> document_of;
  for (size_t d = 0; d < documents.size(); ++d) {
    check_token_ids(documents[d], vocab_size, fmt::format("loglikelihood_rolling: document {}:", d));
    for (auto& w : rolling_windows(documents[d], prefix_token, max_length)) {  // none for an empty document
      windows.push_back(std::move(w));
      document_of.push_back(d);
    }
  }
  const ScoringResult by_window = score_locked(windows);
  ScoringResult result;
  result.stats = by_window.stats;
  result.stats.requests = static_cast<int64_t>(documents.size());
  result.scores.assign(documents.size(), Score{0.0, true});
  for (size_t w = 0; w < windows.size(); ++w) {
    Score& score = result.scores[document_of[w]];
    score.logprob += by_window.scores[w].logprob;
    score.is_greedy = score.is_greedy && by_window.scores[w].is_greedy;
  }
  return result;
}

ScoringStats PrefixScorer::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ScoringStats s = totals_;
  s.entries_held = cache_->entries();
  s.bytes_held = cache_->bytes();
  return s;
}

void PrefixScorer::clear_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  cache_->clear();
}

}  // namespace prefix_scorer
