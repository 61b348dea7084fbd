#include "suffix_runner.h"

#include "prefixed_forward.h"

namespace prefix_scorer {
namespace {

void append(PackedRow& row, const TokenIds& tokens, size_t from, size_t to, int64_t position, int64_t branch) {
  for (size_t i = from; i < to; ++i) {
    row.tokens.push_back(tokens[i]);
    row.positions.push_back(position++);
    row.branch.push_back(branch);
  }
}

}  // namespace

void SuffixRunner::run(const std::vector<size_t>& indices) {
  const ScoringPlan& plan = prefixes_.plan();
  auto deepest_live = [&](int64_t e) {
    while (e >= 0 && !prefixes_.held(e)) e = plan.entries[e].parent;
    return e;
  };
  const std::vector<RowUnit> units = row_units(prefixes_, rows_, indices, deepest_live);
  for (const RowUnit& u : units) {
    const int64_t planned = u.tree >= 0 ? plan.entries[u.tree].parent : plan.order[u.order.front()].entry;
    result_.stats.fallbacks += u.after != planned ? static_cast<int64_t>(u.order.size()) : 0;
  }
  for (const auto& [first, last] : plan_unit_batches(units, options_, memory_))
    run_batch(std::vector<RowUnit>(units.begin() + first, units.begin() + last));
}

void SuffixRunner::run_batch(const std::vector<RowUnit>& units) {
  const ScoringPlan& plan = prefixes_.plan();
  std::vector<EntryPtr> held;
  std::vector<const PrefixEntry*> prefixes;
  std::vector<PackedRow> packed;
  std::vector<const ScoringRow*> scored;           // in the order of their score rows
  std::vector<std::pair<int64_t, int64_t>> spans;  // (unit, first packed index) of each scored row
  for (size_t u = 0; u < units.size(); ++u) {
    const RowUnit& unit = units[u];
    held.push_back(unit.after < 0 ? nullptr : prefixes_.held(unit.after));
    prefixes.push_back(held.back().get());
    PackedRow row;
    if (unit.tree >= 0) {  // the packed prefix's own tokens once, then each row's continuation as a branch
      const TokenIds& trunk = plan.entries[unit.tree].tokens;
      append(row, trunk, static_cast<size_t>(unit.start), trunk.size(), unit.start, 0);
      result_.stats.trees_packed += 1;
    }
    int64_t branch = unit.tree >= 0 ? 1 : 0;
    for (size_t k : unit.order) {
      const ScoringRow& r = rows_[plan.order[k].row];
      const size_t from = unit.tree >= 0 ? static_cast<size_t>(prefixes_.depth(unit.tree)) : unit.start;
      append(row, r.input, from, r.input.size(), static_cast<int64_t>(from), branch++);
      scored.push_back(&r);
      spans.emplace_back(u, static_cast<int64_t>(row.tokens.size()) - r.scored);
    }
    packed.push_back(std::move(row));
  }
  const ForwardBatch batch = make_packed_batch(packed);
  const int64_t width = batch.tokens.size(1);
  std::vector<int64_t> flat;
  for (size_t i = 0; i < scored.size(); ++i) {
    for (int64_t j = 0; j < scored[i]->scored; ++j) flat.push_back(spans[i].first * width + spans[i].second + j);
  }
  const at::Tensor score_rows = at::tensor(flat, at::kLong);
  ScoringStats& stats = result_.stats;
  gather_scores(forward_after(model_, options_, prefixes, batch, score_rows, stats).logprobs, scored, requests_,
                result_.scores);
  const int64_t real = count_forward(batch, stats);
  stats.suffix_tokens += real;
  stats.suffix_padding += batch.valid.numel() - real;
  stats.scored_rows += score_rows.numel();
}

}  // namespace prefix_scorer
