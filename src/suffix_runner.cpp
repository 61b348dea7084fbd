#include "suffix_runner.h"

#include "prefixed_forward.h"

#include <algorithm>

namespace prefix_scorer {

void SuffixRunner::run(size_t begin, size_t end) {
  const ScoringPlan& plan = prefixes_.plan();
  std::vector<Suffix> suffixes;
  for (size_t k = begin; k < end; ++k) {
    const PlannedRow& planned = plan.order[k];
    int64_t e = planned.entry;
    EntryPtr entry;
    while (e >= 0 && !(entry = prefixes_.held(e))) e = plan.entries[e].parent;
    result_.stats.fallbacks += e != planned.entry ? 1 : 0;
    suffixes.push_back({&rows_[planned.row], entry, prefixes_.depth(e)});
  }
  auto len = [](const Suffix& s) { return static_cast<int64_t>(s.row->input.size()) - s.start; };
  std::stable_sort(suffixes.begin(), suffixes.end(), [&](const Suffix& a, const Suffix& b) { return len(a) > len(b); });
  std::vector<int64_t> lengths, prefix_lengths;
  for (const auto& s : suffixes) {
    lengths.push_back(len(s));
    prefix_lengths.push_back(s.start);
  }
  for (const auto& [first, last] :
       plan_batches(lengths, options_.max_batch_tokens, options_.max_batch_rows, prefix_lengths, memory_))
    run_batch(std::vector<Suffix>(suffixes.begin() + first, suffixes.begin() + last));
}

void SuffixRunner::run_batch(const std::vector<Suffix>& suffixes) {
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
  ScoringStats& stats = result_.stats;
  gather_scores(forward_after(model_, options_, prefixes, batch, scored_rows, stats).logprobs, rows, requests_,
                result_.scores);
  stats.suffix_tokens += count_forward(batch, stats);
  stats.scored_rows += scored_rows.numel();
}

}  // namespace prefix_scorer
