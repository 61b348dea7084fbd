#include "prefix_scorer/plain_scorer.h"

#include "batching.h"
#include "requests.h"
#include "rows.h"

#include <algorithm>

namespace prefix_scorer {

ScoringResult score_plain(const Model& model, const std::vector<Request>& requests, const ScoringOptions& options,
                          const PlainPathOptions& path) {
  validate_options(options);
  ScoringResult result;
  ScoringStats& stats = result.stats;
  std::vector<ScoringRow> rows = make_rows(requests, model.config().vocab_size, model.config().window(options.max_length),
                                           path.share_identical, stats.truncated);
  result.scores.resize(requests.size());
  stats.requests = static_cast<int64_t>(requests.size());

  std::stable_sort(rows.begin(), rows.end(),
                   [](const ScoringRow& a, const ScoringRow& b) { return a.input.size() > b.input.size(); });
  std::vector<int64_t> lengths;
  for (const auto& row : rows) lengths.push_back(static_cast<int64_t>(row.input.size()));

  for (const auto& [begin, end] : plan_batches(lengths, options.max_batch_tokens, options.max_batch_rows)) {
    std::vector<const ScoringRow*> batch_rows;
    std::vector<const TokenIds*> inputs;
    std::vector<int64_t> lengths, scored;
    for (size_t i = begin; i < end; ++i) {
      batch_rows.push_back(&rows[i]);
      inputs.push_back(&rows[i].input);
      lengths.push_back(static_cast<int64_t>(rows[i].input.size()));
      scored.push_back(rows[i].scored);
    }
    const ForwardBatch batch = make_batch(inputs, std::vector<int64_t>(inputs.size(), 0));
    const at::Tensor scored_rows = last_positions(lengths, scored, batch.tokens.size(1));
    at::Tensor logprobs;
    if (path.project_all_positions) {
      logprobs = model.forward(batch, nullptr, at::arange(batch.tokens.numel(), at::kLong));
      logprobs = logprobs.index_select(0, scored_rows.to(logprobs.device()));
    } else {
      logprobs = model.forward(batch, nullptr, scored_rows);
    }
    gather_scores(logprobs, batch_rows, requests, result.scores);
    count_forward(batch, stats);
    stats.scored_rows += path.project_all_positions ? batch.tokens.numel() : scored_rows.numel();
    if (options.on_progress) options.on_progress(static_cast<int64_t>(end), static_cast<int64_t>(rows.size()));
  }
  return result;
}

}  // namespace prefix_scorer
