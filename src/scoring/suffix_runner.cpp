#include "scoring/suffix_runner.h"

#include "model/forward_batch.h"
#include "scoring/cascade_or_gather.h"

#include <algorithm>

namespace prefix_scorer {
namespace {

void append(PackedRow& row, const TokenIds& tokens, size_t from, int64_t segment, int64_t branch) {
  for (size_t i = from; i < tokens.size(); ++i) {
    row.tokens.push_back(tokens[i]);
    row.positions.push_back(static_cast<int64_t>(i));
    row.segment.push_back(segment);
    row.branch.push_back(branch);
  }
}

}  // namespace

void SuffixRunner::drop_stack() {
  stack_ = {};
  stack_entries_.clear();
}

void SuffixRunner::run(const std::vector<ForwardSegment>& units, const std::vector<RowLayout>& rows) {
  const bool as_planned = std::all_of(units.begin(), units.end(), [&](const ForwardSegment& u) {
    return prefixes_.deepest_live(u.after) == u.after;
  });
  if (as_planned) return run_forward(units, rows);
  const ScoringPlan& plan = prefixes_.plan();
  const std::vector<ForwardSegment> after_live = forward_segments(
      prefixes_.live(), rows_, rows_of(units, rows), [this](int64_t e) { return prefixes_.deepest_live(e); });
  for (const ForwardSegment& u : after_live) {
    const int64_t planned = u.tree >= 0 ? plan.entries[u.tree].parent : plan.order[u.order.front()].entry;
    result_.stats.fallbacks += u.after != planned ? static_cast<int64_t>(u.order.size()) : 0;
  }
  for (const auto& forward : lay_out_forwards(after_live, options_, memory_)) run_forward(after_live, forward);
}

void SuffixRunner::run_forward(const std::vector<ForwardSegment>& units, const std::vector<RowLayout>& unit_rows) {
  const ScoringPlan& plan = prefixes_.plan();
  std::vector<EntryPtr> held;
  std::vector<const PrefixEntry*> prefixes;
  std::vector<PackedRow> packed;
  std::vector<const ScoringRow*> scored;           // in the order of their score rows
  std::vector<std::pair<int64_t, int64_t>> spans;  // (packed row, first scored index) of each scored row
  for (const RowLayout& unit_row : unit_rows) {
    const auto row_index = static_cast<int64_t>(packed.size());
    const int64_t after = units[unit_row.units.front()].after;  // the same for every unit of the row
    held.push_back(after < 0 ? nullptr : prefixes_.live().held(after));
    prefixes.push_back(held.back().get());
    PackedRow row;
    row.rope_variant = units[unit_row.units.front()].rope_variant;  // the same for every unit of the row
    for (size_t s = 0; s < unit_row.units.size(); ++s) {
      const ForwardSegment& unit = units[unit_row.units[s]];
      const auto segment = static_cast<int64_t>(s);
      if (unit.tree >= 0) {  // the packed prefix's own tokens once, then each row's continuation as a branch
        append(row, plan.entries[unit.tree].tokens, static_cast<size_t>(unit.start), segment, 0);
        result_.stats.trees_packed += 1;
      }
      int64_t branch = unit.tree >= 0 ? 1 : 0;
      for (size_t k : unit.order) {
        const ScoringRow& r = rows_[plan.order[k].row];
        const int64_t from = unit.tree >= 0 ? prefixes_.live().depth(unit.tree) : unit.start;
        append(row, r.input, static_cast<size_t>(from), segment, branch++);
        scored.push_back(&r);
        spans.emplace_back(row_index, static_cast<int64_t>(row.tokens.size()) - r.scored);
      }
    }
    result_.stats.rows_shared += static_cast<int64_t>(unit_row.units.size()) - 1;
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
  gather_scores(forward_after(model_, options_, prefixes, batch, score_rows, stats, &stack_).logprobs, scored, requests_,
                result_.scores);
  // a stack this forward kept holds its rows' prefixes: theirs are the entries to hold now (else the older ones stay)
  const bool kept_here = std::all_of(stack_.prefixes.begin(), stack_.prefixes.end(), [&](const PrefixEntry* p) {
    return std::find(prefixes.begin(), prefixes.end(), p) != prefixes.end();
  });
  if (kept_here) stack_entries_ = std::move(held);
  const int64_t real = count_forward(batch, stats);
  stats.suffix_tokens += real;
  stats.suffix_padding += batch.valid.numel() - real;
  stats.scored_rows += score_rows.numel();
}

}  // namespace prefix_scorer
