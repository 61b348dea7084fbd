#include "row_units.h"

#include <algorithm>
#include <map>

namespace prefix_scorer {

int64_t mark_trees(LivePrefixes& prefixes, const std::vector<ScoringRow>& rows, const PrefixScorerOptions& options) {
  const ScoringPlan& plan = prefixes.plan();
  const size_t n = plan.entries.size();
  std::vector<bool> has_child(n, false);
  std::vector<int64_t> row_count(n, 0), tree_tokens(n, 0);
  for (const auto& entry : plan.entries) {
    if (entry.parent >= 0) has_child[entry.parent] = true;
  }
  for (size_t e = 0; e < n; ++e) tree_tokens[e] = plan.entries[e].depth() - prefixes.depth(plan.entries[e].parent);
  for (const PlannedRow& r : plan.order) {
    if (r.entry < 0) continue;
    ++row_count[r.entry];
    tree_tokens[r.entry] += static_cast<int64_t>(rows[r.row].input.size()) - prefixes.depth(r.entry);
  }
  int64_t marked = 0;
  for (size_t e = 0; e < n; ++e) {
    if (has_child[e] || row_count[e] < 2 || row_count[e] > options.tree_max_branches ||
        tree_tokens[e] > options.max_batch_tokens)
      continue;
    prefixes.state(static_cast<int64_t>(e)).packed = true;
    ++marked;
  }
  return marked;
}

std::vector<RowUnit> row_units(LivePrefixes& prefixes, const std::vector<ScoringRow>& rows,
                               const std::vector<size_t>& indices, const std::function<int64_t(int64_t)>& after_of) {
  const ScoringPlan& plan = prefixes.plan();
  std::vector<RowUnit> units;
  std::map<int64_t, size_t> tree_unit;  // packed prefix -> its unit
  for (size_t k : indices) {
    const PlannedRow& r = plan.order[k];
    const auto len = static_cast<int64_t>(rows[r.row].input.size());
    if (r.entry >= 0 && prefixes.state(r.entry).packed) {
      auto [it, fresh] = tree_unit.emplace(r.entry, units.size());
      if (fresh) {
        const int64_t after = after_of(plan.entries[r.entry].parent);
        const int64_t start = prefixes.depth(after);
        units.push_back({r.entry, {}, after, start, prefixes.depth(r.entry) - start});
      }
      RowUnit& unit = units[it->second];
      unit.order.push_back(k);
      unit.length += len - prefixes.depth(r.entry);
    } else {
      const int64_t after = after_of(r.entry);
      const int64_t start = prefixes.depth(after);
      units.push_back({-1, {k}, after, start, len - start});
    }
  }
  std::stable_sort(units.begin(), units.end(), [](const RowUnit& a, const RowUnit& b) { return a.length > b.length; });
  return units;
}

std::vector<std::pair<size_t, size_t>> plan_unit_batches(const std::vector<RowUnit>& units,
                                                         const PrefixScorerOptions& options, const BatchMemory& memory) {
  std::vector<int64_t> lengths, prefix_lengths;
  for (const RowUnit& u : units) {
    lengths.push_back(u.length);
    prefix_lengths.push_back(u.start);
  }
  return plan_batches(lengths, options.max_batch_tokens, options.max_batch_rows, prefix_lengths, memory);
}

}  // namespace prefix_scorer
