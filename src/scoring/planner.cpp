#include "scoring/planner.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

namespace prefix_scorer {
namespace {

// Rows [lb, rb] of the sorted order share their first `depth` tokens.
struct Interval {
  size_t lb, rb;
  int64_t depth;
};

int64_t common_prefix(const TokenIds& a, const TokenIds& b) {
  const auto n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return static_cast<int64_t>(i);
}

// The lcp-interval tree of sorted sequences: every maximal run of neighbours whose common prefix is at least d,
// for every d that occurs, with at least two rows. Outer intervals come before the intervals they contain.
std::vector<Interval> shared_intervals(const std::vector<int64_t>& lcp) {
  std::vector<Interval> found;
  std::vector<Interval> open{{0, 0, 0}};
  const size_t n = lcp.size() + 1;  // lcp[i - 1] joins rows i - 1 and i
  for (size_t i = 1; i <= n; ++i) {
    const int64_t d = i < n ? lcp[i - 1] : -1;
    size_t lb = i - 1;
    while (!open.empty() && d < open.back().depth) {
      Interval top = open.back();
      open.pop_back();
      top.rb = i - 1;
      found.push_back(top);
      lb = top.lb;
    }
    if (i < n && (open.empty() || d > open.back().depth)) open.push_back({lb, 0, d});
  }
  std::sort(found.begin(), found.end(), [](const Interval& a, const Interval& b) {
    return a.lb != b.lb ? a.lb < b.lb : a.rb != b.rb ? a.rb > b.rb : a.depth < b.depth;
  });
  return found;
}

// Minimum over ranges of a fixed array in O(1) after O(n log n) set-up.
class RangeMin {
 public:
  explicit RangeMin(std::vector<int64_t> values) : table_{std::move(values)} {
    for (size_t w = 1; 2 * w <= table_[0].size(); w *= 2) {
      const auto& prev = table_.back();
      std::vector<int64_t> next(prev.size() - w);
      for (size_t i = 0; i < next.size(); ++i) next[i] = std::min(prev[i], prev[i + w]);
      table_.push_back(std::move(next));
    }
  }
  int64_t operator()(size_t lo, size_t hi) const {  // inclusive
    size_t level = 0;
    while ((size_t{2} << level) <= hi - lo + 1) ++level;
    return std::min(table_[level][lo], table_[level][hi + 1 - (size_t{1} << level)]);
  }

 private:
  std::vector<std::vector<int64_t>> table_;
};

}  // namespace

ScoringPlan find_shared_prefixes(const std::vector<ScoringRow>& rows, int64_t min_prefix_len, int64_t window_tokens) {
  ScoringPlan plan;
  if (rows.empty()) return plan;
  std::vector<size_t> sorted(rows.size());
  std::iota(sorted.begin(), sorted.end(), 0);
  std::sort(sorted.begin(), sorted.end(), [&](size_t a, size_t b) {
    return std::tie(rows[a].rope_variant, rows[a].input) < std::tie(rows[b].rope_variant, rows[b].input);
  });
  std::vector<int64_t> lcp, first_scored;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const ScoringRow& row = rows[sorted[i]];
    first_scored.push_back(static_cast<int64_t>(row.input.size()) - row.scored);
    if (i == 0) continue;
    const ScoringRow& before = rows[sorted[i - 1]];
    lcp.push_back(before.rope_variant == row.rope_variant ? common_prefix(before.input, row.input) : 0);
  }
  const RangeMin earliest_scored(first_scored);

  // Walk the intervals outer-first, keeping the chain of enclosing ones and the entry each maps to.
  std::vector<int64_t> entry_of_row(rows.size(), -1);
  std::map<std::pair<int64_t, TokenIds>, int64_t> entry_of_tokens;  // by (rope variant, tokens)
  std::vector<std::pair<Interval, int64_t>> chain;  // an enclosing interval and its entry (or -1)
  for (const Interval& iv : shared_intervals(lcp)) {
    while (!chain.empty() && chain.back().first.rb < iv.lb) chain.pop_back();
    const int64_t parent = chain.empty() ? -1 : chain.back().second;
    const int64_t parent_depth = parent < 0 ? 0 : plan.entries[parent].depth();
    const int64_t depth = std::min(iv.depth, earliest_scored(iv.lb, iv.rb));
    int64_t entry = parent;
    if (depth >= min_prefix_len && depth > parent_depth) {
      const ScoringRow& row = rows[sorted[iv.lb]];
      TokenIds tokens(row.input.begin(), row.input.begin() + depth);
      // Sibling intervals cut to the same depth share one entry: the cache holds each prefix once.
      auto [it, fresh] =
          entry_of_tokens.emplace(std::make_pair(row.rope_variant, tokens), static_cast<int64_t>(plan.entries.size()));
      if (fresh) plan.entries.push_back({parent, std::move(tokens), row.rope_variant});
      entry = it->second;
      for (size_t i = iv.lb; i <= iv.rb; ++i) entry_of_row[i] = entry;
    }
    chain.emplace_back(iv, entry);
  }

  // Sorted order keeps each subtree's rows together; cut it into windows and sort each by suffix length.
  for (size_t i = 0; i < sorted.size(); ++i) plan.order.push_back({sorted[i], entry_of_row[i]});
  auto depth = [&](int64_t e) { return e < 0 ? int64_t{0} : plan.entries[e].depth(); };
  auto suffix_len = [&](const PlannedRow& r) { return static_cast<int64_t>(rows[r.row].input.size()) - depth(r.entry); };
  std::vector<bool> counted(plan.entries.size(), false);
  size_t window_begin = 0;
  int64_t window_used = 0;
  for (size_t i = 0; i <= plan.order.size(); ++i) {
    int64_t added = 0;  // prefix tokens this row brings into the window
    for (int64_t e = i < plan.order.size() ? plan.order[i].entry : -1; e >= 0 && !counted[e]; e = plan.entries[e].parent)
      added += depth(e) - depth(plan.entries[e].parent);
    const bool close = i == plan.order.size() || (added > 0 && window_used > 0 && window_used + added > window_tokens);
    if (close && i > window_begin) {
      plan.window_ends.push_back(i);
      std::stable_sort(plan.order.begin() + window_begin, plan.order.begin() + i,
                       [&](const PlannedRow& a, const PlannedRow& b) { return suffix_len(a) > suffix_len(b); });
      window_begin = i;
      window_used = 0;
      std::fill(counted.begin(), counted.end(), false);  // prefixes still cached weigh on the next window too
    }
    if (i == plan.order.size()) break;
    for (int64_t e = plan.order[i].entry; e >= 0 && !counted[e]; e = plan.entries[e].parent) counted[e] = true;
    window_used += added;
  }
  return plan;
}

void drop_entries(ScoringPlan& plan, const std::vector<bool>& drop) {
  std::vector<int64_t> kept_as(plan.entries.size(), -1);
  std::vector<PrefixEntryPlan> kept;
  for (size_t e = 0; e < plan.entries.size(); ++e) {  // parents come before children
    PrefixEntryPlan& entry = plan.entries[e];
    const int64_t parent = entry.parent < 0 ? -1 : kept_as[entry.parent];
    if (drop[e]) {
      kept_as[e] = parent;
      continue;
    }
    kept_as[e] = static_cast<int64_t>(kept.size());
    kept.push_back({parent, std::move(entry.tokens), entry.rope_variant, entry.packed});
  }
  plan.entries = std::move(kept);
  for (PlannedRow& r : plan.order) r.entry = r.entry < 0 ? -1 : kept_as[r.entry];
}

}  // namespace prefix_scorer
