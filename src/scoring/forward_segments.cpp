#include "scoring/forward_segments.h"

#include <algorithm>
#include <map>
#include <set>

namespace prefix_scorer {
namespace {

// Units as (length, index), longest first; ties in index order. lower_bound({n, 0}): the longest of at most n.
struct LongestFirst {
  bool operator()(const std::pair<int64_t, size_t>& a, const std::pair<int64_t, size_t>& b) const {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  }
};
using Left = std::set<std::pair<int64_t, size_t>, LongestFirst>;

}  // namespace

std::vector<bool> tree_entries(const ScoringPlan& plan, const std::vector<ScoringRow>& rows,
                               const PrefixScorerOptions& options) {
  const size_t n = plan.entries.size();
  auto depth = [&](int64_t e) { return e < 0 ? int64_t{0} : plan.entries[e].depth(); };
  std::vector<bool> has_child(n, false);
  std::vector<int64_t> row_count(n, 0), tree_tokens(n, 0);
  for (const auto& entry : plan.entries) {
    if (entry.parent >= 0) has_child[entry.parent] = true;
  }
  for (size_t e = 0; e < n; ++e) tree_tokens[e] = plan.entries[e].depth() - depth(plan.entries[e].parent);
  for (const PlannedRow& r : plan.order) {
    if (r.entry < 0) continue;
    ++row_count[r.entry];
    tree_tokens[r.entry] += static_cast<int64_t>(rows[r.row].input.size()) - depth(r.entry);
  }
  std::vector<bool> trees(n, false);
  for (size_t e = 0; e < n; ++e) {
    trees[e] = !has_child[e] && row_count[e] >= 2 && row_count[e] <= options.tree_max_branches &&
               tree_tokens[e] <= options.max_batch_tokens;
  }
  return trees;
}

ScoringPlan prefixes_worth_caching(const std::vector<ScoringRow>& rows, const PrefixScorerOptions& options, int64_t window_tokens) {
  ScoringPlan plan = find_shared_prefixes(rows, options.min_prefix_len, window_tokens);
  const std::vector<bool> trees = tree_entries(plan, rows, options);
  std::vector<bool> drop(plan.entries.size(), false);
  for (size_t e = 0; e < plan.entries.size(); ++e) {
    const PrefixEntryPlan& entry = plan.entries[e];
    drop[e] = entry.parent >= 0 && !trees[e] &&
              entry.depth() - plan.entries[entry.parent].depth() < options.min_prefix_len;
  }
  // Dropping moves an entry's rows to its parent, which then has more rows and tokens than the child had: no
  // entry becomes a tree by it, and the trees (leaves) keep their rows.
  for (size_t e = 0; e < plan.entries.size(); ++e) plan.entries[e].packed = trees[e];
  drop_entries(plan, drop);
  return plan;
}

std::vector<ForwardSegment> forward_segments(LivePrefixes& prefixes, const std::vector<ScoringRow>& rows,
                               const std::vector<size_t>& indices, const std::function<int64_t(int64_t)>& after_of) {
  const ScoringPlan& plan = prefixes.plan();
  std::vector<ForwardSegment> units;
  std::map<int64_t, size_t> tree_unit;  // packed prefix -> its unit
  for (size_t k : indices) {
    const PlannedRow& r = plan.order[k];
    const auto len = static_cast<int64_t>(rows[r.row].input.size());
    if (r.entry >= 0 && plan.entries[r.entry].packed) {
      auto [it, fresh] = tree_unit.emplace(r.entry, units.size());
      if (fresh) {
        const int64_t after = after_of(plan.entries[r.entry].parent);
        const int64_t start = prefixes.depth(after);
        units.push_back({r.entry, {}, after, start, prefixes.depth(r.entry) - start, rows[r.row].rope_variant});
      }
      ForwardSegment& unit = units[it->second];
      unit.order.push_back(k);
      unit.length += len - prefixes.depth(r.entry);
    } else {
      const int64_t after = after_of(r.entry);
      const int64_t start = prefixes.depth(after);
      units.push_back({-1, {k}, after, start, len - start, rows[r.row].rope_variant});
    }
  }
  std::stable_sort(units.begin(), units.end(), [](const ForwardSegment& a, const ForwardSegment& b) { return a.length > b.length; });
  return units;
}

std::vector<size_t> rows_of(const std::vector<ForwardSegment>& units, const std::vector<RowLayout>& forward) {
  std::vector<size_t> indices;
  for (const RowLayout& row : forward) {
    for (size_t u : row.units) indices.insert(indices.end(), units[u].order.begin(), units[u].order.end());
  }
  return indices;
}

std::vector<std::vector<RowLayout>> lay_out_forwards(const std::vector<ForwardSegment>& units,
                                                    const PrefixScorerOptions& options, const BatchMemory& memory) {
  // Units left as (length, index), all of them and by the cached prefix they run after and their rope variant
  // (which units sharing a row must share).
  Left left;
  std::map<std::pair<int64_t, int64_t>, Left> left_after;
  auto group = [&](size_t u) { return std::make_pair(units[u].after, units[u].rope_variant); };
  for (size_t u = 0; u < units.size(); ++u) {
    left.emplace(units[u].length, u);
    left_after[group(u)].emplace(units[u].length, u);
  }
  // The next row of a forward `width` wide: the longest unit left, then (packing) the longest units left after the
  // same prefix that fit in the width it has left, one after another.
  auto next_row = [&](int64_t width) {
    const size_t first = left.begin()->second;
    RowLayout row{{first}, units[first].length};
    const Left& same_prefix = left_after.at(group(first));
    auto last = same_prefix.find(*left.begin());
    while (options.pack_rows) {
      auto it = same_prefix.lower_bound({width - row.length, 0});
      if (it != same_prefix.end() && !LongestFirst()(*last, *it)) it = std::next(last);  // past those taken
      if (it == same_prefix.end()) break;
      row.units.push_back(it->second);
      row.length += it->first;
      last = it;
    }
    return row;
  };

  std::vector<std::vector<RowLayout>> batches;
  while (!left.empty()) {
    const int64_t width = std::max<int64_t>(left.begin()->first, 1);
    std::vector<RowLayout> batch;
    int64_t prefix = 0, real = 0;
    while (!left.empty()) {
      RowLayout row = next_row(width);
      const auto rows = static_cast<int64_t>(batch.size()) + 1;
      const int64_t row_prefix = std::max(prefix, units[row.units.front()].start);
      const bool fits = rows <= options.max_batch_rows && rows * width <= options.max_batch_tokens &&
                        within_memory(memory, rows, width, row_prefix) &&
                        within_padding(rows * width, real + row.length);
      if (!batch.empty() && !fits) break;
      for (size_t u : row.units) {
        left.erase({units[u].length, u});
        left_after.at(group(u)).erase({units[u].length, u});
      }
      prefix = row_prefix;
      real += row.length;
      batch.push_back(std::move(row));
    }
    batches.push_back(std::move(batch));
  }
  return batches;
}

}  // namespace prefix_scorer
