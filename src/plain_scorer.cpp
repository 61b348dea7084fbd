#include "prefix_scorer/plain_scorer.h"

#include "prefix_scorer/batching.h"
#include "prefix_scorer/requests.h"

#include <algorithm>
#include <numeric>

namespace prefix_scorer {
namespace {

// One forward over windows[order[begin..end)], adding each request's score to `result`.
void score_batch(const Model& model, const std::vector<ScoringWindow>& windows, const std::vector<size_t>& order,
                 std::pair<size_t, size_t> range, ScoringResult& result) {
  std::vector<const TokenIds*> rows;
  std::vector<int64_t> starts, score_rows, targets;
  for (size_t k = range.first; k < range.second; ++k) {
    rows.push_back(&windows[order[k]].input);
    starts.push_back(0);
  }
  const ForwardBatch batch = make_batch(rows, starts);
  const int64_t t = batch.tokens.size(1);
  for (size_t k = range.first; k < range.second; ++k) {
    const ScoringWindow& w = windows[order[k]];
    const auto row = static_cast<int64_t>(k - range.first);
    const auto len = static_cast<int64_t>(w.input.size()), n = static_cast<int64_t>(w.targets.size());
    for (int64_t j = 0; j < n; ++j) score_rows.push_back(row * t + len - n + j);
    targets.insert(targets.end(), w.targets.begin(), w.targets.end());
  }
  const at::Tensor logprobs = model.forward(batch, nullptr, at::tensor(score_rows, at::kLong));
  const at::Tensor target = at::tensor(targets, at::kLong).to(logprobs.device()).unsqueeze(1);
  const at::Tensor picked = logprobs.gather(1, target).squeeze(1).to(at::kCPU, at::kDouble);
  const at::Tensor greedy = (logprobs.argmax(1) == target.squeeze(1)).to(at::kCPU);
  auto lp = picked.accessor<double, 1>();
  auto gr = greedy.accessor<bool, 1>();

  int64_t at_row = 0;
  for (size_t k = range.first; k < range.second; ++k) {
    Score& score = result.scores[order[k]];
    score = Score{0.0, true};
    for (size_t j = 0; j < windows[order[k]].targets.size(); ++j, ++at_row) {
      score.logprob += lp[at_row];
      score.is_greedy = score.is_greedy && gr[at_row];
    }
  }
  ScoringStats& s = result.stats;
  s.forwards += 1;
  s.tokens_computed += batch.valid.sum().item<int64_t>();
  s.padding_tokens += batch.valid.numel() - batch.valid.sum().item<int64_t>();
  s.scored_rows += static_cast<int64_t>(score_rows.size());
}

}  // namespace

ScoringResult score_plain(const Model& model, const std::vector<Request>& requests, const ScoringOptions& options) {
  validate_options(options);
  validate_requests(requests, model.config().vocab_size);
  const int64_t max_length = options.max_length > 0 ? options.max_length : model.config().max_position_embeddings;

  ScoringResult result;
  result.scores.resize(requests.size());
  result.stats.requests = static_cast<int64_t>(requests.size());
  std::vector<ScoringWindow> windows;
  windows.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    windows.push_back(scoring_window(requests[i], max_length, i));
    result.stats.truncated += windows.back().truncated ? 1 : 0;
  }

  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return windows[a].input.size() > windows[b].input.size(); });
  std::vector<int64_t> lengths;
  for (size_t i : order) lengths.push_back(static_cast<int64_t>(windows[i].input.size()));

  for (const auto& range : plan_batches(lengths, options.max_batch_tokens, options.max_batch_rows))
    score_batch(model, windows, order, range, result);
  return result;
}

}  // namespace prefix_scorer
