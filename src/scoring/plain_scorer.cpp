#include "prefix_scorer/plain_scorer.h"

#include "scoring/batching.h"
#include "scoring/requests.h"
#include "scoring/rows.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace prefix_scorer {
namespace {

// One forward over rows [begin, end), their scores gathered into `result`.
void run_plain_batch(const Model& model, const std::vector<ScoringRow>& rows, size_t begin, size_t end,
                     const std::vector<Request>& requests, const PlainPathOptions& path, ScoringResult& result) {
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
  count_forward(batch, result.stats);
  result.stats.scored_rows += path.project_all_positions ? batch.tokens.numel() : scored_rows.numel();
}

}  // namespace

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
  // Rows whose forward takes the longrope long factors (the longest, first after sorting) run in batches of
  // their own, through the model with those factors.
  const auto long_end = static_cast<size_t>(std::count_if(
      lengths.begin(), lengths.end(), [&](int64_t n) { return model.config().long_rope(n); }));
  const std::optional<Model> long_model = long_end > 0 ? std::optional<Model>(model.with_long_rope()) : std::nullopt;

  for (const auto& [span_begin, span_end] : {std::pair<size_t, size_t>{0, long_end}, {long_end, rows.size()}}) {
    const Model& span_model = span_begin < long_end ? *long_model : model;
    const std::vector<int64_t> span_lengths(lengths.begin() + span_begin, lengths.begin() + span_end);
    for (const auto& [batch_begin, batch_end] :
         plan_batches(span_lengths, options.max_batch_tokens, options.max_batch_rows)) {
      run_plain_batch(span_model, rows, span_begin + batch_begin, span_begin + batch_end, requests, path, result);
      if (options.on_progress) options.on_progress(static_cast<int64_t>(span_begin + batch_end), static_cast<int64_t>(rows.size()));
    }
  }
  return result;
}

}  // namespace prefix_scorer
