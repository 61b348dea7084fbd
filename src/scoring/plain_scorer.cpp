#include "prefix_scorer/plain_scorer.h"

#include "model/forward_batch.h"
#include "model/host_transfers.h"
#include "scoring/batching.h"
#include "scoring/requests.h"
#include "scoring/call_stats.h"
#include "scoring/rows.h"

#include <algorithm>
#include <utility>

namespace prefix_scorer {
namespace {

// One forward over rows [begin, end), their scores gathered into `result`.
void run_plain_batch(const Model& model, const std::vector<ScoringRow>& rows, size_t begin, size_t end,
                     const std::vector<Request>& requests, const PlainPathOptions& path, ScoringResult& result) {
  std::vector<const ScoringRow*> batch_rows;
  std::vector<const TokenIds*> inputs;
  std::vector<int64_t> lengths, scored, variants;
  for (size_t i = begin; i < end; ++i) {
    batch_rows.push_back(&rows[i]);
    inputs.push_back(&rows[i].input);
    variants.push_back(rows[i].rope_variant);
    lengths.push_back(static_cast<int64_t>(rows[i].input.size()));
    scored.push_back(rows[i].scored);
  }
  const ForwardBatch batch = make_batch(inputs, std::vector<int64_t>(inputs.size(), 0), variants);
  const at::Tensor scored_rows = last_positions(lengths, scored, batch.tokens.size(1));
  at::Tensor logprobs;
  if (path.project_all_positions) {
    logprobs = model.forward(batch, nullptr, at::arange(batch.tokens.numel(), at::kLong));
    logprobs = logprobs.index_select(0, upload(scored_rows, logprobs.device()));
  } else {
    logprobs = model.forward(batch, nullptr, scored_rows);
  }
  gather_scores(logprobs, batch_rows, requests, result.scores);
  count_forward(batch, result.stats);
  result.stats.scored_rows += path.project_all_positions ? batch.tokens.numel() : scored_rows.numel();
}

}  // namespace

// Every request through `model`, batched with right padding and sorted by length (longest first).
ScoringResult score_plain(const Model& model, const std::vector<Request>& requests, const ScoringOptions& options,
                          const PlainPathOptions& path) {
  validate_options(options, model.config());
  const TransferCounts before = thread_transfers();
  ScoringResult result;
  std::vector<ScoringRow> rows =
      make_rows(requests, model.config(), options.max_length, path.share_identical, result.stats.truncated);
  result.scores.resize(requests.size());
  result.stats.requests = static_cast<int64_t>(requests.size());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ScoringRow& a, const ScoringRow& b) { return a.input.size() > b.input.size(); });
  std::vector<int64_t> lengths;
  for (const auto& row : rows) lengths.push_back(static_cast<int64_t>(row.input.size()));
  for (const auto& [begin, end] : cut_batches(lengths, options.max_batch_tokens, options.max_batch_rows)) {
    run_plain_batch(model, rows, begin, end, requests, path, result);
    if (options.on_progress) options.on_progress(static_cast<int64_t>(end), static_cast<int64_t>(rows.size()));
  }
  add_transfers_since(before, result.stats);
  return result;
}

}  // namespace prefix_scorer
